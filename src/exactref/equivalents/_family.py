"""One mechanism for a library's equivalents of the elementwise family: each op's equivalent is
built from its record (the registry) and the library's models, with no list of ops and no
branch on an op's name.

A record's counterpart for a library (``spec.counterparts.of("numpy")``, a
:class:`~exactref.ops.Counterpart`) carries the library's call (``"np.maximum"``), its contract
and, in ``data``, the op-specific facts the library's equivalent needs: ``data["model"]`` names
the model (how that library's kernel computes the op: ``"extremum"``, ``"comparison"``, ...),
and the other keys are that model's parameters (``{"model": "extremum", "larger": True,
"propagates": True}`` for NumPy's maximum). A library module keeps only what is library-wide
(its promotion policy, its conversions, its flush rule, how its kernels round) and its models,
registered with a :class:`Models` table; :func:`build` then makes one function per record that
names a model, called ``spec.name``, with the model's signature less its first parameter (the
:class:`Op` the model is called with) and the model's docstring (``{call}`` in it replaced by
the library's call).

A new library (torch's family, ONNX Runtime, OpenVINO, TensorFlow) is a :class:`Library`, its
models, and ``data`` in the records it covers:

>>> import exactref.equivalents.numpy as ern
>>> ern.maximum.__name__, ern.maximum.__module__
('maximum', 'exactref.equivalents.numpy')
>>> sorted(op.name for op in records("numpy"))[:3]
['abs', 'add', 'clamp']
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..ops import select

__all__ = ["Library", "Models", "Op", "build", "records"]

_EMPTY = MappingProxyType({})


@dataclass(frozen=True)
class Op:
    """What a model is called with: the op's record and the library's counterpart of it."""

    spec: object
    call: str
    data: Mapping = field(default_factory=lambda: _EMPTY)
    contract: object = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def promotion(self) -> str:
        """The op's promotion op (the name the promotion policies know it by)."""
        return self.spec.promotion

    @property
    def function(self):
        """The op itself (``er.<name>``): the exact reference the models start from."""
        return self.spec.function

    def __getitem__(self, key):
        return self.data[key]

    def get(self, key, default=None):
        return self.data.get(key, default)


class Models:
    """A library's models by name (the names a counterpart's ``data["model"]`` gives):
    ``@models`` registers a function under its name without leading underscores, and
    ``@models("name")`` under another."""

    def __init__(self, library: str):
        self.library = library
        self._by_name = {}

    def __call__(self, fn=None, /):
        if isinstance(fn, str):
            name = fn
            return lambda f: self._add(name, f)
        return self._add(fn.__name__.lstrip("_"), fn)

    def _add(self, name: str, fn):
        if name in self._by_name:
            raise ValueError(f"{self.library} has two models named {name!r}")
        self._by_name[name] = fn
        return fn

    def get(self, name: str):
        try:
            return self._by_name[name]
        except KeyError:
            raise LookupError(f"{self.library} has no model {name!r} (a record's counterpart "
                              f"names it; its models are {', '.join(sorted(self._by_name))})"
                              ) from None


@dataclass(frozen=True)
class Library:
    """A library whose equivalents :func:`build` makes: its name (a field of the records'
    counterparts) and its :class:`Models`."""

    name: str
    models: Models


def records(library: str) -> tuple:
    """The elementwise records whose counterpart for ``library`` names a model, as the
    :class:`Op` each model is called with."""
    out = []
    for spec in select(plan="elementwise"):
        cp = spec.counterparts.of(library)
        if cp is None or not cp.data or "model" not in cp.data:
            continue
        out.append(Op(spec, cp.call, MappingProxyType(dict(cp.data)), cp.contract))
    return tuple(out)


def _equivalent(op: Op, model, module: str):
    @functools.wraps(model)
    def equivalent(*args, **kwargs):
        return model(op, *args, **kwargs)

    sig = inspect.signature(model)
    params = list(sig.parameters.values())[1:]
    equivalent.__signature__ = sig.replace(parameters=params)
    del equivalent.__wrapped__
    equivalent.__name__ = equivalent.__qualname__ = op.name
    equivalent.__module__ = module
    equivalent.__doc__ = (model.__doc__ or "").replace("{call}", op.call)
    equivalent.op = op
    return equivalent


def build(library: Library, namespace: dict) -> tuple:
    """One equivalent per record of :func:`records` put into ``namespace`` (a module's
    globals) under the op's name; returns the names, in catalog order, for ``__all__``."""
    names = []
    for op in records(library.name):
        fn = _equivalent(op, library.models.get(op["model"]), namespace["__name__"])
        namespace[op.name] = fn
        names.append(op.name)
    return tuple(names)
