"""Frozen records: every type of the model subclasses :class:`Frozen`, a frozen msgspec Struct.

One base for the whole model, so a reader sees at a glance which classes are immutable
records: compared and hashed by value, refused changes (``AttributeError``), rebuilt with
:func:`replace`, and seen by type checkers as frozen dataclass-like types (PEP 681).

Why not ``@dataclass(frozen=True)``: a dataclass compiles its methods from source when its
class is built, about 0.8 ms a class here; a live run builds about 90 of them before its
first request (75 ms of a 250 ms import, issue 41), where a Struct class is built in C in
under 0.1 ms. Its instances are also smaller and built faster (no ``object.__setattr__``
per field), which the per-request and per-row paths feel.

msgspec has no ``compare=False`` or ``repr=False``: the few records that leave a field out
of equality or out of their repr say so with :func:`not_compared` and :func:`not_shown`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar, dataclass_transform

import msgspec
from msgspec import field
from msgspec.structs import fields, replace

__all__ = ["Frozen", "field", "fields", "not_compared", "not_shown", "replace"]

T = TypeVar("T")


# For type checkers: a subclass is frozen too (msgspec's own transform would call it not frozen).
@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Frozen(msgspec.Struct, frozen=True):
    """An immutable record (a subclass declares its fields as annotations, as a dataclass does)."""


def not_compared(*names: str) -> Callable[[type[T]], type[T]]:
    """Leave ``names`` out of a record's equality and hash: they are notes about the value
    (where in the contract it was written, a counter, a cause), not part of it."""

    def decorate(cls: type[T]) -> type[T]:
        kept = tuple(name for name in cls.__struct_fields__ if name not in names)  # type: ignore[attr-defined]

        def __eq__(self: Any, other: object) -> bool:
            if type(other) is not type(self):
                return NotImplemented
            # Identity first, as a dataclass's tuple comparison does: a record holding NaN (or any
            # value unequal to itself) still equals itself, as a Struct's own __eq__ has it too.
            return all((a := getattr(self, name)) is (b := getattr(other, name)) or a == b for name in kept)

        def __hash__(self: Any) -> int:
            return hash(tuple(getattr(self, name) for name in kept))

        cls.__eq__ = __eq__  # type: ignore[method-assign]
        cls.__hash__ = __hash__  # type: ignore[method-assign]
        return cls

    return decorate


def not_shown(*names: str) -> Callable[[type[T]], type[T]]:
    """Leave ``names`` out of a record's repr (a token, what a secret-scrubber hides), and out of
    what a Struct gives pretty-printers (``__rich_repr__``: rich, as a user's traceback with
    locals shows a record, would otherwise print every field, where a dataclass's
    ``repr=False`` field stayed hidden)."""

    def decorate(cls: type[T]) -> type[T]:
        shown = tuple(name for name in cls.__struct_fields__ if name not in names)  # type: ignore[attr-defined]

        def __repr__(self: Any) -> str:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
            return f"{type(self).__name__}({inner})"

        def __rich_repr__(self: Any) -> Iterator[tuple[str, Any]]:
            for name in shown:
                yield name, getattr(self, name)

        cls.__repr__ = __repr__  # type: ignore[method-assign]
        cls.__rich_repr__ = __rich_repr__  # type: ignore[attr-defined]
        return cls

    return decorate
