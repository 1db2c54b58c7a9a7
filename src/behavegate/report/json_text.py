"""The report's JSON text, encoded once and written in pieces.

A 10,000-scenario report is ~100 MB of JSON. Its evidence digest (canonical JSON,
skylos's bytes), its size limit and the text every JSON view writes all encode the
same values: each scenario is encoded once (``canonical_json``: msgspec, with the
standard library's floats), and the digest, the size and the indented text are
derived from those strings. The text
is produced scenario by scenario, so no view holds all of it at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from behavegate.canonical_json import canonical_text
from behavegate.frozen import frozen
from behavegate.indented_json import indent
from behavegate.limits import REPORT_MAX_NESTING

SCENARIOS = "scenarios"
_NOT_PRINTABLE_ASCII = re.compile("[\x7f-\U0010ffff]")
_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_string: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring


@frozen
class EncodedReport:
    """The evidence of a report, encoded: every evidence key's canonical text but the
    scenarios', each scenario's, and the evidence digest over all of them."""

    parts: Mapping[str, str]
    records: Sequence[str]
    digest: str


def encode(evidence: Mapping[str, Any], scenarios: Iterable[Mapping[str, Any]], keys: Iterable[str]) -> EncodedReport:
    """``evidence``: the report's evidence keys but ``scenarios``; ``keys``: every key
    the digest covers (a missing one is ``null``)."""
    parts = {key: canonical_text(value) for key, value in evidence.items()}
    records = [canonical_text(entry) for entry in scenarios]
    hasher = hashlib.sha256()
    hasher.update(b"{")
    for index, key in enumerate(sorted({*keys, SCENARIOS})):
        hasher.update(f"{',' if index else ''}{_string(key)}:".encode())
        if key == SCENARIOS:
            hasher.update(b"[")
            for number, record in enumerate(records):
                if number:
                    hasher.update(b",")
                hasher.update(record.encode())
            hasher.update(b"]")
        else:
            hasher.update(parts.get(key, "null").encode())
    hasher.update(b"}")
    return EncodedReport(parts, records, hasher.hexdigest())


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


def _nested(compact: str, depth: int) -> str:
    text = indent(compact)
    return text.replace("\n", "\n" + "  " * depth) if "\n" in text else text


def chunks(encoded: EncodedReport, rest: Mapping[str, Any], *, leave_out: str | None = None) -> Iterator[str]:
    """``json.dumps(document, indent=2, sort_keys=True)`` in pieces (no piece splits a
    string), where the document is the encoded evidence plus ``rest`` (keys not
    encoded for the digest), without ``leave_out``."""
    keys = sorted({*encoded.parts, SCENARIOS, *rest} - {leave_out})
    if not keys:
        yield "{}"
        return
    yield "{"
    for index, key in enumerate(keys):
        yield f"{',' if index else ''}\n  {json.dumps(key)}: "
        if key == SCENARIOS:
            yield from _list(encoded.records)
        elif key in encoded.parts:
            yield _nested(ascii_part(encoded.parts[key]), 1)
        else:
            yield _nested(_COMPACT.encode(rest[key]), 1)
    yield "\n}"


def _list(records: Sequence[str]) -> Iterator[str]:
    if not records:
        yield "[]"
        return
    for index, record in enumerate(records):
        yield f"{',' if index else '['}\n    {_nested(ascii_part(record), 2)}"
    yield "\n  ]"


def size_within(encoded: EncodedReport, rest: Mapping[str, Any], *, leave_out: str, limit: int) -> bool:
    """Is the text of :func:`chunks` (``leave_out`` left out), plus a final newline, at
    most ``limit`` characters? Decided from the compact text when even the most
    whitespace indenting could add fits (each item: a newline, at most REPORT_MAX_NESTING levels of
    indent, a space after its key), else by indenting it."""
    compact = [*encoded.parts.values(), *encoded.records, *(_COMPACT.encode(v) for k, v in rest.items() if k != leave_out)]
    size = sum(len(ascii_part(text)) for text in compact)
    items = sum(text.count(",") + text.count("[") + text.count("{") + text.count(":") for text in compact)
    if size + (items + len(encoded.records) + len(rest) + 2) * (3 + 2 * REPORT_MAX_NESTING) < limit:
        return True
    return sum(len(chunk) for chunk in chunks(encoded, rest, leave_out=leave_out)) + 1 <= limit
