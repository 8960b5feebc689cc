"""A modelled implementation of an elementwise op (:class:`Model`): the object an op's record
holds in ``OpSpec.models`` and the elementwise driver runs. A string, its name, so a record's
models still read (and compare) as their names.

>>> m = Model("fused in {c}")
>>> m == "fused in {c}", m.name, m.fn is None, m.relevant(None)
(True, 'fused in {c}', True, True)
>>> import pickle
>>> pickle.loads(pickle.dumps(m)) == m
True
"""

from __future__ import annotations

__all__ = ["Model"]


class Model(str):
    """A modelled implementation: ``fn(ctx, *operand_parts)`` returns the exact value of its
    last step (a list of ExactArrays, one per output part), having rounded its earlier steps into
    the compute format with ``ctx.store``; the driver rounds that value into the compute format
    and then into the output format. ``fn`` None is the fused model: the exact value rounded in
    the compute format, then stored. ``applies(ctx)`` says when the model is relevant.
    ``derive(ctx, exact, *operand_parts)``, instead of ``fn``, gives the model's value from the
    exact value (the ends of an accuracy band, as numbers of the compute format). The string
    (``name``) may name the compute format as ``{c}`` and the call's accuracy as ``{a}``.
    Immutable, as the record that holds it."""

    __slots__ = ("fn", "applies", "derive")

    def __new__(cls, name: str, fn=None, applies=None, derive=None):
        self = super().__new__(cls, name)
        for key, value in (("fn", fn), ("applies", applies), ("derive", derive)):
            object.__setattr__(self, key, value)
        return self

    @property
    def name(self) -> str:
        """The model's name (the string itself, as a plain str)."""
        return str.__str__(self)

    def relevant(self, ctx) -> bool:
        return self.applies is None or bool(self.applies(ctx))

    def __setattr__(self, key, value):
        raise AttributeError(f"a Model is immutable (cannot set {key!r}); build a new one")

    def __delattr__(self, key):
        raise AttributeError(f"a Model is immutable (cannot delete {key!r})")

    def _args(self) -> tuple:
        return (self.name, self.fn, self.applies, self.derive)

    def __reduce__(self):
        return (type(self), self._args())
