"""JSON Schema checks of tool-call arguments (``tools.arguments_valid``).

Uses the ``jsonschema`` package: the reference Python implementation, kept
current with the drafts (2020-12 included), pure Python, and the validator
the OpenAPI and MCP tool ecosystems use. A schema is checked against its own
metaschema first, so an invalid declared schema is reported, not trusted.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from behavegate.model import ToolCall


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import json

    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def argument_errors(call: ToolCall, schemas: Mapping[str, Mapping[str, Any]]) -> list[str]:
    import json

    import jsonschema

    if call.name not in schemas:
        return ["the tool is not declared, so there is no schema to check against"]
    if call.arguments is None:
        return ["arguments were not a JSON object"]
    try:
        validator = _validator(json.dumps(schemas[call.name], sort_keys=True))
    except jsonschema.SchemaError as exc:
        return [f"the declared parameters schema is invalid: {exc.message}"]
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(validator.iter_errors(dict(call.arguments)), key=lambda e: list(e.absolute_path))
    ][:10]
