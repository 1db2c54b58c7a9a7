"""Making untrusted text inert for terminals, logs and reports."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """Control, bidi and line-separator characters shown as escapes, never acted on."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


def one_line(text: str, limit: int = 300) -> str:
    """``visible`` and on a single line, cut to ``limit`` characters with a marker."""
    flat = visible(text.replace("\r\n", "\n")).replace("\n", "\\n").replace("\t", " ")
    if len(flat) > limit:
        return flat[: limit - 1] + "…"
    return flat


def has_surrogate(text: str) -> bool:
    """An unpaired surrogate (from a ``\\ud800`` JSON or YAML escape) can be held
    in a Python string but never written as UTF-8."""
    return not text.isascii() and any("\ud800" <= char <= "\udfff" for char in text)


def surrogate_paths(value: object, path: str) -> list[str]:
    """Where in a decoded JSON value (keys included) such text occurs."""
    found: list[str] = []
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if has_surrogate(item):
                found.append(where)
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and has_surrogate(key):
                    found.append(where)
                stack.append((child, f"{where}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
    return sorted(found)


def scrub(value: object) -> object:
    """The same JSON value with every unpaired surrogate shown as U+FFFD."""
    if isinstance(value, str):
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in value) if has_surrogate(value) else value
    if isinstance(value, dict):
        return {scrub(key): scrub(child) for key, child in value.items()}
    if isinstance(value, list):
        return [scrub(child) for child in value]
    return value
