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
