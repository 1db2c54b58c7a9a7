"""Frozen records: ``@dataclass(frozen=True)`` for the model, without its start-up cost.

Why not ``dataclasses``: importing it pulls in ``inspect``, ``ast``, ``dis`` and
``tokenize`` (16 ms), and it compiles generated source for every class (~20 ms
for behavegate's ~45 records) on every process start. Measured with
``bench/bench.py``: that start-up was about 40% of a 120-scenario offline run.

A record is a class whose annotated attributes become its fields: positional or
keyword construction with defaults and default factories, immutability, value
equality and hashing, a readable repr, ``replace`` and ``fields`` — the
behaviour ``tests/test_frozen.py`` holds equal to ``dataclasses`` for every
record class. Type checkers see it as a frozen dataclass (PEP 681). What it does
not give: ``dataclasses.asdict`` and pytest's field-by-field diff (records
compare and print the same, but a failing assert shows their reprs whole).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")
_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Raised on an attempt to change a record."""


class Field:
    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(
        self, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, compare: bool = True, repr: bool = True
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr  # False keeps a secret out of reprs and logs
        self.name = ""

    def value(self) -> Any:
        if self.default is not _MISSING:
            return self.default
        if self.default_factory is not None:
            return self.default_factory()
        raise TypeError(f"missing required argument {self.name!r}")


def field(
    *, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, compare: bool = True, repr: bool = True
) -> Any:
    """A field with a default factory, left out of equality, or out of the repr."""
    return Field(default, default_factory, compare, repr)


def fields(item: Any) -> tuple[Field, ...]:
    """A record's (or record class's) fields, in order, as ``dataclasses.fields``."""
    cls: Any = item if isinstance(item, type) else type(item)
    return cls.__record_fields__  # type: ignore[no-any-return]


def replace(item: T, /, **changes: Any) -> T:
    """A copy of ``item`` with some fields changed."""
    names = {spec.name for spec in fields(item)}
    unknown = sorted(set(changes) - names)
    if unknown:
        raise TypeError(f"{type(item).__name__} has no fields {unknown}")
    copy = object.__new__(type(item))
    for name in names:
        object.__setattr__(copy, name, changes[name] if name in changes else getattr(item, name))
    return copy


def _collect(cls: type) -> tuple[Field, ...]:
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for spec in getattr(base, "__record_fields__", ()):
            found[spec.name] = spec
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 (avoiding inspect is the point)
        if "ClassVar" in str(annotation):  # as dataclasses does for string annotations
            continue
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        spec.name = name
        if isinstance(value, Field):
            if value.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, value.default)
        found[name] = spec
    return tuple(found.values())


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[T]) -> type[T]:
    specs = _collect(cls)
    compared = tuple(spec.name for spec in specs if spec.compare)
    setattr(cls, "__record_fields__", specs)  # noqa: B010  (a class attribute of our own)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(specs):
            raise TypeError(f"{cls.__name__} takes at most {len(specs)} arguments")
        for spec, value in zip(specs, args, strict=False):
            object.__setattr__(self, spec.name, value)
        for spec in specs[len(args) :]:
            object.__setattr__(self, spec.name, kwargs.pop(spec.name) if spec.name in kwargs else spec.value())
        if kwargs:
            raise TypeError(f"{cls.__name__} got unexpected arguments {sorted(kwargs)}")

    def __setattr__(self: Any, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self: Any, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self: Any, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in compared)

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in compared))

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{spec.name}={getattr(self, spec.name)!r}" for spec in specs if spec.repr)
        return f"{cls.__name__}({inner})"

    for name, function in (("__init__", __init__), ("__setattr__", __setattr__), ("__delattr__", __delattr__),
                           ("__eq__", __eq__), ("__hash__", __hash__), ("__repr__", __repr__)):  # fmt: skip
        function.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, function)
    return cls
