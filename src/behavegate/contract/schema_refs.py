"""A declared tool schema must stay within itself: behavegate never fetches a
schema, so the contract reader refuses every ``$ref`` (``$dynamicRef``,
``$recursiveRef``) that is not a local ``#...`` pointer and every unknown
``$schema``, each with its YAML path and line (see ``judge.argument_schemas``
for the validator's empty registry, the second lock). It also refuses a schema
regex the engine that runs them cannot compile."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords whose values are instance data, not schemas: a "$ref" inside is just data.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# Keywords whose values map arbitrary names (not keywords) to schemas.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"})


def _schemas(schema: Mapping[str, Any], path: str) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Every mapping in schema position (not data, not a map of names), with its path, in document order."""
    stack: list[tuple[Any, str, bool]] = [(schema, path, False)]
    while stack:
        node, where, named = stack.pop()
        if isinstance(node, list):
            stack.extend((item, f"{where}[{index}]", False) for index, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, Mapping):
            continue
        if not named:
            yield node, where
        children = [
            (value, f"{where}.{key}", not named and key in _NAMED_SCHEMAS)
            for key, value in node.items()
            if named or key not in _DATA_KEYWORDS
        ]
        stack.extend(reversed(children))


def foreign_references(schema: Mapping[str, Any], path: str) -> Iterator[tuple[Mapping[str, Any], str, str, str]]:
    """Every reference that would leave the schema, and every unknown ``$schema``,
    as (the mapping holding it, its key, its path, the problem)."""
    from referencing.jsonschema import UnknownDialect, specification_with

    for node, where in _schemas(schema, path):
        for key, value in node.items():
            at = f"{where}.{key}"
            if key in REFERENCE_KEYWORDS and isinstance(value, str) and not value.startswith("#"):
                yield node, key, at, f"{at} must be a local '#...' reference; behavegate never fetches schemas, got {value!r}"
            if key == "$schema" and isinstance(value, str):
                try:
                    specification_with(value)
                except UnknownDialect:
                    yield node, key, at, f"{at} names an unknown metaschema; behavegate never fetches schemas, got {value!r}"


def bad_patterns(schema: Mapping[str, Any], path: str) -> Iterator[tuple[Mapping[str, Any], str, str, str]]:
    """Every ``pattern`` and ``patternProperties`` name the ``regex`` engine cannot compile
    (it runs them: ``judge.argument_schemas``), as :func:`foreign_references` reports."""
    from behavegate.contract.patterns import pattern_problem

    for node, where in _schemas(schema, path):
        found: list[tuple[Mapping[str, Any], str, str]] = []
        if isinstance(node.get("pattern"), str):
            found.append((node, "pattern", node["pattern"]))
        if isinstance(node.get("patternProperties"), Mapping):
            found.extend((node["patternProperties"], name, name) for name in node["patternProperties"] if isinstance(name, str))
        for holder, key, text in found:
            at = f"{where}.pattern" if holder is node else f"{where}.patternProperties.{key}"
            problem = pattern_problem(text)
            if problem is not None:
                yield holder, key, at, f"{at} is not a valid regular expression: {problem}"
