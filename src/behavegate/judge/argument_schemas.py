"""JSON Schema checks of tool-call arguments (``tools.arguments_valid``).

Uses the ``jsonschema`` package: the reference Python implementation, kept
current with the drafts (2020-12 included), pure Python, and the validator
the OpenAPI and MCP tool ecosystems use. A schema is checked against its own
metaschema first, so an invalid declared schema is reported, not trusted.

A schema is resolved only within itself: the contract reader refuses any
reference that is not a local ``#...`` pointer (``contract.schema_refs``), and
the validator gets an empty reference registry whose retrieval refuses
everything, so jsonschema's deprecated remote resolution (urlopen on
``http://`` and ``file://``) can never run. No format checker is enabled, so
no ``format`` looks anything up either.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from behavegate.model import ToolCall


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs fields mypy cannot see


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import json

    import jsonschema
    from referencing import Registry

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    # jsonschema adds its bundled metaschemas (package data) to this registry; nothing else resolves.
    return cls(schema, registry=Registry(retrieve=_refuse))  # type: ignore[call-arg]  # attrs, as in jsonschema


def argument_errors(call: ToolCall, schemas: Mapping[str, Mapping[str, Any]]) -> list[str]:
    import json

    import jsonschema
    from referencing.exceptions import Unresolvable

    if call.name not in schemas:
        return ["the tool is not declared, so there is no schema to check against"]
    if call.arguments is None:
        return ["arguments were not a JSON object"]
    try:
        validator = _validator(json.dumps(schemas[call.name], sort_keys=True))
    except jsonschema.SchemaError as exc:
        return [f"the declared parameters schema is invalid: {exc.message}"]
    try:
        errors = sorted(validator.iter_errors(dict(call.arguments)), key=lambda e: list(e.absolute_path))
    except Unresolvable as exc:
        return [f"the declared parameters schema has a reference that does not resolve locally: {exc.ref!r}"]
    return [f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}" for error in errors][:10]
