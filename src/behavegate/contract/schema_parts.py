"""JSON Schema fragments shared by the contract's schema (``json_schema.py``) and the
check rows that carry their own (``checks.py``): a text, a tool name, a list of names."""

from __future__ import annotations

from typing import Any

TEXT = {"type": "string", "minLength": 1, "maxLength": 100_000, "pattern": "\\S"}
TOOL_NAME = {"type": "string", "pattern": "^\\s*[A-Za-z0-9_-]{1,64}\\s*$"}
SAFE_ID = {"type": "string", "pattern": "^\\s*[A-Za-z0-9][A-Za-z0-9._-]{0,95}\\s*$"}
NAMES = {"type": ["array", "null"], "items": TOOL_NAME, "uniqueItems": True}
TEXTS = {"type": ["array", "null"], "items": TEXT, "uniqueItems": True}
REGEXES = {"type": "array", "items": {"type": "string", "format": "regex"}}
RATE = {"type": "number", "minimum": 0, "maximum": 1}
COUNT = {"type": "integer", "minimum": 0}
BOOLEAN = {"type": "boolean"}
REQUIRED_CALL = {
    "oneOf": [
        TOOL_NAME,
        {
            "type": "object",
            "properties": {"name": TOOL_NAME, "arguments": {"type": "object"}},
            "required": ["name"],
            "additionalProperties": False,
        },
    ]
}


def block(properties: dict[str, Any], keys: tuple[str, ...], **extra: Any) -> dict[str, Any]:
    """A mapping of exactly ``keys`` (or null), each as ``properties`` has it."""
    missing = set(keys) - set(properties)
    assert not missing, f"schema lacks {sorted(missing)}"
    return {"type": ["object", "null"], "properties": {k: properties[k] for k in keys}, "additionalProperties": False, **extra}
