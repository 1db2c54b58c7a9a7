"""``behavegate.frozen`` behaves as ``@dataclass(frozen=True)`` for every record
class behavegate defines: same fields in the same order, same defaults, same
construction, equality, hashing, repr, ``replace`` and immutability. It exists
only for start-up time (see its docstring); this test is what lets it."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any

import pytest

import behavegate
from behavegate import frozen


def _record_classes() -> list[type[Any]]:
    found: list[type[Any]] = []
    for info in pkgutil.walk_packages(behavegate.__path__, "behavegate."):
        if info.name == "behavegate.__main__":
            continue  # running it would run the CLI
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and "__record_fields__" in value.__dict__ and value.__module__ == module.__name__:
                found.append(value)
    return found


RECORDS = _record_classes()


def _twin(cls: type[Any]) -> type[Any]:
    """The same class as a standard frozen dataclass."""
    specs = []
    for spec in frozen.fields(cls):
        options: dict[str, Any] = {"compare": spec.compare, "repr": spec.repr}
        if spec.default is not frozen._MISSING:
            options["default"] = spec.default
        elif spec.default_factory is not None:
            options["default_factory"] = spec.default_factory
        specs.append((spec.name, Any, dataclasses.field(**options)))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True)


def test_every_record_class_is_found() -> None:
    assert len(RECORDS) > 30
    assert {"Observation", "Scenario", "Report", "Verdict"} <= {cls.__name__ for cls in RECORDS}


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_a_record_behaves_as_the_standard_frozen_dataclass(cls: type[Any]) -> None:
    twin = _twin(cls)
    names = [spec.name for spec in frozen.fields(cls)]
    assert names == [spec.name for spec in dataclasses.fields(twin)]
    required = {
        spec.name: (spec.name, 1)
        for spec in frozen.fields(cls)
        if spec.default is frozen._MISSING and spec.default_factory is None
    }
    record, standard = cls(**required), twin(**required)
    for name in names:
        assert getattr(record, name) == getattr(standard, name), name  # defaults and factories
    assert repr(record) == repr(standard)
    again = cls(**required)
    assert record == again
    try:
        assert hash(record) == hash(again) == hash(standard)
    except TypeError:  # a mapping field: neither is hashable
        with pytest.raises(TypeError):
            hash(standard)
    compared = [spec.name for spec in frozen.fields(cls) if spec.compare]
    if compared:
        changed = {compared[0]: ("changed", 2)}
        assert frozen.replace(record, **changed) != record
        assert dataclasses.replace(standard, **changed) != standard
        assert getattr(frozen.replace(record, **changed), compared[0]) == ("changed", 2)
    with pytest.raises(AttributeError):
        setattr(record, names[0], None)
    with pytest.raises(AttributeError):
        setattr(standard, names[0], None)
    positional = cls(*[required.get(name, getattr(record, name)) for name in names])
    assert positional == record
