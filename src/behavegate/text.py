"""Making untrusted text inert for terminals, logs and reports.

``neutralize`` is what the console boundary (``behavegate.github.console``)
applies to every byte; the others shape text for one field of a report;
``redact_text`` masks a secret in every encoding behavegate quotes text in.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from urllib.parse import quote, quote_plus

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


# Python's str.splitlines separators and the runner's (CR, LF), except LF itself.
SEPARATORS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
SEPARATOR = re.compile(f"[{SEPARATORS}]")
_COMMAND_START = re.compile(r"^([^\S\n]*)::", re.M)  # not \s: it would span lines and go quadratic
LEGACY_COMMAND = "##["


def _escape(char: str) -> str:
    code = ord(char)
    return "\\r" if char == "\r" else (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def neutralize(text: str) -> str:
    """Text that no runner or log viewer can read as a workflow command."""
    text = SEPARATOR.sub(lambda m: _escape(m.group()), text.replace("\r\n", "\n"))
    text = text.replace(LEGACY_COMMAND, "##\\[")
    # Leading whitespace can itself hide a separator-less command; after the
    # replacements above only LF ends a line, so a line start is a "\n" start.
    return _COMMAND_START.sub(lambda m: f"{m.group(1)}| ::", text)


def neutralize_json(text: str) -> str:
    """The same guarantees for a JSON document, without changing what it means.

    ``json.dumps`` never writes ``#`` or these separators outside a string, and
    inside a string ``\\u0023`` and ``\\u2028`` decode to the same characters.
    Control characters below U+0020 are already escaped by ``json``; a line of
    indented JSON starts with spaces and a quote or bracket, never ``::``.
    """
    text = text.replace(LEGACY_COMMAND, "\\u0023#[")
    for char in "\x85\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


# --- a secret, masked in every encoding behavegate quotes text in -----------------------------
# (report/redact.py masks the run's tokens in everything persisted or shown; the judge's
# question masks them before it is sent: evidence/judge_client.py.)

MARKER = "[REDACTED]"


def _xml(text: str, quotes: bool) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#x27;") if quotes else text


def workflow_escaped(text: str, property_value: bool = False) -> str:
    """GitHub workflow-command escaping, exactly as the runner unescapes: a command's data
    (``%``, CR, LF) and, for a property's value, also ``:`` and ``,``. The one place it is
    written: annotations, ``::add-mask::`` and the secret's encoded forms use it."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


@lru_cache(maxsize=4)
def encoded_forms(secret: str) -> tuple[str, ...]:
    """The token as it can appear inside a larger text, longest first."""
    forms = {
        secret,
        # repr() of a string holding the token: single-quoted unless that string has ' and no "
        repr(secret + "'\"")[1:-4],
        ascii(secret + "'\"")[1:-4],
        secret.encode("unicode_escape").decode("ascii"),
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1],
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret, safe=""),
        quote_plus(secret),
        _xml(secret, quotes=False),
        _xml(secret, quotes=True),
        _xml(secret, quotes=False).replace('"', "&quot;"),
        workflow_escaped(secret, property_value=False),
        workflow_escaped(secret, property_value=True),
    }
    if '"' not in secret:
        forms.add(repr(secret + "'")[1:-2])  # ...and double-quoted when it does
        forms.add(ascii(secret + "'")[1:-2])
    return tuple(sorted(forms, key=lambda form: (-len(form), form)))


def redact_text(value: str, secret: str, replacement: str | None = None) -> str:
    if replacement is None:
        replacement = MARKER if len(secret) >= len(MARKER) else "*" * len(secret)
    for form in encoded_forms(secret):
        if form in value:
            value = value.replace(form, replacement)
    return value


def path_text(path: object) -> str:
    """A file path as report text: a name that is not UTF-8 (os.fsdecode's surrogates) with
    its bytes escaped (``\\xff``), as every report is UTF-8."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
