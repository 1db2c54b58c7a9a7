"""``json.dumps(value, indent=2, sort_keys=True)``, byte for byte, faster.

With ``indent`` set, the standard library falls back to its pure-Python
generator-based encoder; the report is rendered on every run, so this module
builds the same text with one recursive function and the C string escaper.
A property test keeps the two identical.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii
from typing import Any

_INF = float("inf")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INF:
        return "Infinity"
    if value == -_INF:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return str(encode_basestring_ascii(key))
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, float):
        return f'"{_float(key)}"'
    return f'"{int.__repr__(key)}"'


def dumps_indented(value: Any) -> str:
    """Equal to ``json.dumps(value, indent=2, sort_keys=True, default=str)``."""
    parts: list[str] = []
    append = parts.append

    def encode(item: Any, level: int) -> None:
        if isinstance(item, str):
            append(encode_basestring_ascii(item))
        elif item is None:
            append("null")
        elif item is True:
            append("true")
        elif item is False:
            append("false")
        elif isinstance(item, int):
            append(int.__repr__(item))
        elif isinstance(item, float):
            append(_float(item))
        elif isinstance(item, list | tuple):
            if not item:
                append("[]")
                return
            inner = "\n" + "  " * (level + 1)
            append("[")
            first = True
            for child in item:
                append(inner if first else "," + inner)
                first = False
                encode(child, level + 1)
            append("\n" + "  " * level + "]")
        elif isinstance(item, dict):
            if not item:
                append("{}")
                return
            inner = "\n" + "  " * (level + 1)
            append("{")
            first = True
            for key in sorted(item):
                append(inner if first else "," + inner)
                first = False
                append(_key(key))
                append(": ")
                encode(item[key], level + 1)
            append("\n" + "  " * level + "}")
        else:
            encode(str(item), level)

    encode(value, 0)
    return "".join(parts)
