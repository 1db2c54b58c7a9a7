"""Every record of the model is a frozen dataclass: immutable, compared and hashed by
value, so a judged result cannot change after it is judged."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any

import pytest

import behavegate
from behavegate.frozen import FrozenInstanceError, frozen


def _record_classes() -> list[type[Any]]:
    found: list[type[Any]] = []
    for info in pkgutil.walk_packages(behavegate.__path__, "behavegate."):
        if info.name in {"behavegate.__main__", "behavegate.pytest_plugin"}:
            continue  # running __main__ would run the CLI; the plugin is pytest's to load
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
                found.append(value)
    return found


def test_the_model_has_records_and_every_one_is_frozen() -> None:
    records = _record_classes()
    assert len(records) > 40
    assert [cls.__qualname__ for cls in records if not cls.__dataclass_params__.frozen] == []


def test_a_record_refuses_changes_and_compares_by_value() -> None:
    @frozen
    class Point:
        x: int
        y: int = 0

    point = Point(1)
    with pytest.raises(FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    assert point == Point(1, 0) and hash(point) == hash(Point(1, 0)) and point != Point(2)
    assert dataclasses.replace(point, y=3) == Point(1, 3)
