"""The report's JSON text, encoded once.

A 10,000-scenario report is ~100 MB of JSON. Its evidence digest (canonical JSON,
skylos's bytes), its size limit and the text every JSON view writes are all the same
values encoded: the big parts are encoded once, by the standard library's C encoder,
and the digest, the displayed text and its size are derived from those strings.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from behavegate.indented_json import indent

_NOT_PRINTABLE_ASCII = re.compile("[\x7f-\U0010ffff]")
_CANONICAL = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_string: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring


def canonical_part(value: Any) -> str:
    """``value`` as the digests encode it: sorted keys, no spaces, UTF-8 text, no NaN."""
    return _CANONICAL.encode(value)


def scenarios_part(scenarios: list[dict[str, Any]]) -> str:
    """``canonical_part(scenarios)`` for the report's scenario list, where a scenario's
    verdicts and observation are the very objects its representative attempt holds:
    each such list or mapping is encoded once and its text reused."""
    memo: dict[int, str] = {}

    def value(item: Any) -> str:
        if isinstance(item, str):
            return str(_string(item))
        if not isinstance(item, dict | list) or not item:
            return canonical_part(item)
        text = memo.get(id(item))
        if text is None:
            text = memo[id(item)] = canonical_part(item)
        return text

    def record(entry: dict[str, Any]) -> str:
        if not all(isinstance(key, str) for key in entry):
            return canonical_part(entry)
        fields = []
        for key in sorted(entry):
            item = entry[key]
            if key == "attempts" and isinstance(item, list) and all(isinstance(a, dict) for a in item):
                text = "[" + ",".join(record(attempt) for attempt in item) + "]"
            else:
                text = value(item)
            fields.append(f"{_string(key)}:{text}")
        return "{" + ",".join(fields) + "}"

    return "[" + ",".join(record(entry) if isinstance(entry, dict) else canonical_part(entry) for entry in scenarios) + "]"


def digest_of(parts: Mapping[str, str], keys: Iterable[str]) -> str:
    """sha256 of the canonical JSON of ``{key: value}`` for ``keys`` (a missing key is
    ``null``), built from the parts already encoded: the same bytes as encoding the
    mapping whole."""
    hasher = hashlib.sha256()
    hasher.update(b"{")
    for index, key in enumerate(sorted(set(keys))):
        hasher.update(f"{',' if index else ''}{canonical_part(key)}:{parts.get(key, 'null')}".encode())
    hasher.update(b"}")
    return hasher.hexdigest()


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # as a surrogate pair, as the standard library writes it
        code -= 0x10000
        return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def ascii_part(canonical: str) -> str:
    """A canonical part as ``ensure_ascii=True`` would have written it. Outside strings
    canonical JSON is ASCII, and inside them only DEL and non-ASCII characters are
    written raw, so escaping those is the whole difference."""
    if canonical.isascii() and "\x7f" not in canonical:
        return canonical
    return _NOT_PRINTABLE_ASCII.sub(_escaped, canonical)


def document_text(data: Mapping[str, Any], parts: Mapping[str, str]) -> str:
    """``json.dumps(data, indent=2, sort_keys=True)``, reusing the canonical ``parts``
    already encoded for some of its keys."""
    pieces = []
    for key in sorted(data):
        part = parts.get(key)
        encoded = ascii_part(part) if part is not None else json.dumps(data[key], sort_keys=True, separators=(",", ":"))
        pieces.append(f"{json.dumps(key)}:{encoded}")
    return indent("{" + ",".join(pieces) + "}")


def size_without(text: str, data: Mapping[str, Any], key: str) -> int:
    """The length of ``text`` (``document_text(data, ...)``) had ``key`` been left out:
    its line is ``,`` + newline + 2 spaces + ``"key": `` + the value indented one level."""
    if key not in data:
        return len(text)
    if len(data) == 1:
        return len("{}")
    value = indent(json.dumps(data[key], sort_keys=True, separators=(",", ":")))
    return len(text) - (len(value) + 2 * value.count("\n") + len(json.dumps(key)) + 6)
