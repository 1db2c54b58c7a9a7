"""Records behave like frozen dataclasses: construction, defaults, immutability,
equality, hashing, repr (secrets left out), replace and inheritance."""

from __future__ import annotations

import pytest

from behavegate.evidence.trust import Credentials
from behavegate.record import FrozenInstanceError, field, fields, record, replace


@record
class Point:
    """A test record."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)
    note: str = field(default="", compare=False)


@record
class Labeled(Point):
    """A subclass adds a field after the base's."""

    label: str = "p"


def test_construction_defaults_and_factories() -> None:
    assert (Point(1).x, Point(1).y, Point(1).tags) == (1, 0, ())
    assert Point(1, 2, ("a",)).tags == ("a",)
    assert Point(x=3, y=4).y == 4
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected"):
        Point(1, z=2)  # type: ignore[call-arg]


def test_records_are_frozen_and_compare_by_value() -> None:
    point = Point(1, 2)
    with pytest.raises(FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    assert Point(1, 2, note="a") == Point(1, 2, note="b")  # note is not compared
    assert Point(1, 2) != Point(1, 3) and hash(Point(1, 2)) == hash(Point(1, 2, note="z"))
    assert Point(1) != Labeled(1)


def test_replace_and_fields_and_inheritance() -> None:
    moved = replace(Point(1, 2), y=9)
    assert (moved.x, moved.y) == (1, 9)
    with pytest.raises(TypeError):
        replace(Point(1), z=1)
    assert [spec.name for spec in fields(Labeled(1))] == ["x", "y", "tags", "note", "label"]
    assert Labeled(1, label="q").label == "q"


def test_repr_leaves_secrets_out() -> None:
    assert "x=1" in repr(Point(1))
    assert "hunter2" not in repr(Credentials("hunter2-token"))
