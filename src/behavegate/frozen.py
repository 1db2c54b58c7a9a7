"""Frozen records: the model's types are ``@dataclass(frozen=True)``.

One decorator name for the whole model, so a reader sees at a glance which classes
are immutable records, and type checkers see them as frozen dataclasses (PEP 681).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, field, fields, replace
from typing import TypeVar, dataclass_transform

__all__ = ["FrozenInstanceError", "field", "fields", "frozen", "replace"]

T = TypeVar("T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[T]) -> type[T]:
    return dataclass(frozen=True)(cls)
