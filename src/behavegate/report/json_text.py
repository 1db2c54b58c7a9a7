"""The report's JSON text, encoded once and written in pieces.

A 10,000-scenario report is ~100 MB of JSON. Its evidence digest (canonical JSON,
skylos's bytes), its size limit and the text every JSON view writes all encode the
same values: each scenario is encoded once (``canonical_json``: msgspec, with the
standard library's floats), and the digest, the size and the indented text are
derived from those strings. The text
is produced scenario by scenario, so no view holds all of it at once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from behavegate.canonical_json import canonical_bytes, canonical_text
from behavegate.frozen import Frozen
from behavegate.indented_json import indent
from behavegate.limits import REPORT_MAX_NESTING

SCENARIOS = "scenarios"


@functools.cache
def _not_printable_ascii() -> re.Pattern[str]:
    # Compiled on first use: the range spans all of Unicode, ~10 ms of CPU that an ASCII report never needs.
    return re.compile("[\x7f-\U0010ffff]")


_COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_string: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring


class EncodedReport(Frozen):
    """The evidence of a report, encoded: every evidence key's canonical text but the
    scenarios', each scenario's (UTF-8: hashed and measured as it is), and the evidence
    digest over all of them."""

    parts: Mapping[str, str]
    records: Sequence[bytes]
    digest: str


def encode(evidence: Mapping[str, Any], scenarios: Iterable[Mapping[str, Any]], keys: Iterable[str]) -> EncodedReport:
    """``evidence``: the report's evidence keys but ``scenarios``; ``keys``: every key
    the digest covers (a missing one is ``null``)."""
    parts = {key: canonical_text(value) for key, value in evidence.items()}
    records = [canonical_bytes(entry) for entry in scenarios]
    return EncodedReport(parts, records, digest(parts, records, keys))


def digest(parts: Mapping[str, str], records: Iterable[bytes], keys: Iterable[str]) -> str:
    """The evidence digest: canonical JSON of the evidence keys, ``records`` being the
    scenarios' (read once, in order: a streamed report's come from a file)."""
    hasher = hashlib.sha256()
    hasher.update(b"{")
    for index, key in enumerate(sorted({*keys, SCENARIOS})):
        hasher.update(f"{',' if index else ''}{_string(key)}:".encode())
        if key == SCENARIOS:
            hasher.update(b"[")
            for number, record in enumerate(records):
                if number:
                    hasher.update(b",")
                hasher.update(record)
            hasher.update(b"]")
        else:
            hasher.update(parts.get(key, "null").encode())
    hasher.update(b"}")
    return hasher.hexdigest()


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # as a surrogate pair, as the standard library writes it
        code -= 0x10000
        return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def ascii_part(canonical: str | bytes) -> str:
    """A canonical part as ``ensure_ascii=True`` would have written it. Outside strings
    canonical JSON is ASCII, and inside them only DEL and non-ASCII characters are
    written raw, so escaping those is the whole difference."""
    text = canonical.decode("utf-8") if isinstance(canonical, bytes) else canonical
    if text.isascii() and "\x7f" not in text:
        return text
    return _not_printable_ascii().sub(_escaped, text)


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


_BATCH = 256  # scenarios indented by one call: ~2.5 MB of text at 10 assertions each
_WRAPPED_HEAD = '{\n  "s": ['  # how indent() begins {"s":[...]} and ends it: the records
_WRAPPED_TAIL = "\n  ]\n}"  # between sit where the report's scenarios list puts them


def _list(records: Sequence[bytes]) -> Iterator[str]:
    """The scenarios list, indented a batch at a time: each batch wrapped as ``{"s": [...]}``
    so the one C call puts every record at its depth in the report."""
    if not records:
        yield "[]"
        return
    for start in range(0, len(records), _BATCH):
        batch = ",".join(ascii_part(record) for record in records[start : start + _BATCH])
        text = indent('{"s":[' + batch + "]}")
        yield ("," if start else "[") + text[len(_WRAPPED_HEAD) : -len(_WRAPPED_TAIL)]
    yield "\n  ]"


def size_within(encoded: EncodedReport, rest: Mapping[str, Any], *, leave_out: str, limit: int) -> bool:
    """Is the text of :func:`chunks` (``leave_out`` left out), plus a final newline, at
    most ``limit`` characters? Decided from the compact text when even the most
    whitespace indenting could add fits (each item: a newline, at most REPORT_MAX_NESTING levels of
    indent, a space after its key), else by indenting it."""
    compact = [
        *(part.encode("utf-8") for part in encoded.parts.values()),
        *encoded.records,
        *(_COMPACT.encode(v).encode("ascii") for k, v in rest.items() if k != leave_out),
    ]
    size = sum(len(text) if text.isascii() and b"\x7f" not in text else len(ascii_part(text)) for text in compact)
    items = sum(len(text) - len(text.translate(None, b",[{:")) for text in compact)  # one pass each, in C
    if size + (items + len(encoded.records) + len(rest) + 2) * (3 + 2 * REPORT_MAX_NESTING) < limit:
        return True
    return sum(len(chunk) for chunk in chunks(encoded, rest, leave_out=leave_out)) + 1 <= limit
