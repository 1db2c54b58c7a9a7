"""A declared tool schema must stay within itself: behavegate never fetches a
schema, so the contract reader refuses every ``$ref`` (``$dynamicRef``,
``$recursiveRef``) that is not a local ``#...`` pointer and every unknown
``$schema``, each with its YAML path and line (see ``judge.argument_schemas``
for the validator's empty registry, the second lock)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords whose values are instance data, not schemas: a "$ref" inside is just data.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# Keywords whose values map arbitrary names (not keywords) to schemas.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"})


def foreign_references(schema: Mapping[str, Any], path: str) -> Iterator[tuple[Mapping[str, Any], str, str, str]]:
    """Every reference that would leave the schema, and every unknown ``$schema``,
    as (the mapping holding it, its key, its path, the problem)."""
    from referencing.jsonschema import UnknownDialect, specification_with

    stack: list[tuple[Any, str, bool]] = [(schema, path, False)]
    while stack:
        node, where, named = stack.pop()
        if isinstance(node, list):
            stack.extend((item, f"{where}[{index}]", False) for index, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, Mapping):
            continue
        children: list[tuple[Any, str, bool]] = []
        for key, value in node.items():
            at = f"{where}.{key}"
            if not named:
                if key in REFERENCE_KEYWORDS and isinstance(value, str) and not value.startswith("#"):
                    yield node, key, at, f"{at} must be a local '#...' reference; behavegate never fetches schemas, got {value!r}"
                if key == "$schema" and isinstance(value, str):
                    try:
                        specification_with(value)
                    except UnknownDialect:
                        yield node, key, at, f"{at} names an unknown metaschema; behavegate never fetches schemas, got {value!r}"
                if key in _DATA_KEYWORDS:
                    continue
            children.append((value, at, not named and key in _NAMED_SCHEMAS))
        stack.extend(reversed(children))
