"""Every record of the model is frozen: immutable, compared and hashed by value, so a judged
result cannot change after it is judged."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any

import pytest

import behavegate
from behavegate.frozen import Frozen, not_compared, not_shown, replace


def _record_classes() -> list[type[Any]]:
    found: list[type[Any]] = []
    for info in pkgutil.walk_packages(behavegate.__path__, "behavegate."):
        if info.name in {"behavegate.__main__", "behavegate.pytest_plugin"}:
            continue  # running __main__ would run the CLI; the plugin is pytest's to load
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            is_record = isinstance(value, type) and (issubclass(value, Frozen) or dataclasses.is_dataclass(value))
            if is_record and value.__module__ == module.__name__:
                found.append(value)
    return found


def test_the_model_has_records_and_every_one_is_frozen() -> None:
    records = _record_classes()
    assert len(records) > 100
    assert [cls.__qualname__ for cls in records if not issubclass(cls, Frozen)] == []
    assert [cls.__qualname__ for cls in records if not cls.__struct_config__.frozen] == []


class Point(Frozen):
    x: int
    y: int = 0


def test_a_record_refuses_changes_and_compares_by_value() -> None:
    point = Point(1)
    with pytest.raises(AttributeError):
        point.x = 2  # type: ignore[misc]
    assert point == Point(1, 0) and hash(point) == hash(Point(1, 0)) and point != Point(2)
    assert replace(point, y=3) == Point(1, 3)


@not_shown("token")
@not_compared("line")
class Noted(Frozen):
    name: str
    line: int = 0
    token: str = ""


def test_a_field_left_out_of_comparison_or_repr_is_left_out_of_both_hash_and_text() -> None:
    assert Noted("a", 1) == Noted("a", 2) and hash(Noted("a", 1)) == hash(Noted("a", 2))
    assert Noted("a") != Noted("b") and Noted("a", token="s") != Noted("a", token="t")
    assert "secret" not in repr(Noted("a", token="secret")) and repr(Noted("a", 3)) == "Noted(name='a', line=3)"
