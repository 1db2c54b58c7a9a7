"""The line formats: OTLP JSON Lines (Collector and SDK file exporters; one export batch a
line, a trace possibly split across lines) and Assay's flat span rows."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import IO, Any

from behavegate.evidence.traces.messages import SURROGATE_PROBLEM
from behavegate.evidence.traces.problems import Problems, decode_resource, decode_span
from behavegate.evidence.traces.spans import Keep, Span, assay_span, otlp_span
from behavegate.limits import TRACE_MAX_CONTAINERS, TRACE_MAX_OBJECT_BYTES, TRACE_READ_CHUNK
from behavegate.magnitude import integer_text
from behavegate.text import surrogate_paths

_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def _lines(stream: IO[bytes], problems: Problems) -> Iterator[tuple[int, bytes]]:
    number = 0
    while True:
        line = stream.readline(TRACE_MAX_OBJECT_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > TRACE_MAX_OBJECT_BYTES and not line.endswith(b"\n"):
            problems.add(f"line longer than {TRACE_MAX_OBJECT_BYTES} bytes", number)
            while line and not line.endswith(b"\n"):  # skip to the next line
                line = stream.readline(TRACE_READ_CHUNK)
            continue
        if line.strip():
            yield number, line


def _json_line(line: bytes, number: int, problems: Problems) -> Any:
    if len(line) > TRACE_MAX_CONTAINERS and line.count(b"{") + line.count(b"[") > TRACE_MAX_CONTAINERS:
        # Decoded, each empty container costs ~60 bytes: memory would be many times the line.
        problems.add(f"more than {TRACE_MAX_CONTAINERS} JSON objects and arrays on one line", number)
        return None
    try:
        # Decoded strictly first: json.loads(bytes) lets UTF-8-encoded surrogates through (surrogatepass).
        value = json.loads(line.decode("utf-8").removeprefix("\ufeff"), parse_int=integer_text)
        if _SURROGATE_BYTES.search(line) and surrogate_paths(value, "line"):
            problems.add(SURROGATE_PROBLEM, number)
            return None
        return value
    except UnicodeDecodeError as exc:
        problems.add(f"not UTF-8 text: byte 0x{line[exc.start]:02x} at position {exc.start}", number)
        return None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        truncated = not line.endswith(b"\n")
        problems.add(f"{'truncated' if truncated else 'invalid'} JSON: {exc}", number)
        return None


def _rows(stream: IO[bytes], problems: Problems) -> Iterator[tuple[int, Any]]:
    """Each line's JSON value with its line number (lines that are not JSON are problems)."""
    for number, line in _lines(stream, problems):
        value = _json_line(line, number, problems)
        if value is not None:
            yield number, value


def read_jsonl(stream: IO[bytes], keep: Keep, problems: Problems) -> Iterator[Span]:
    for number, document in _rows(stream, problems):
        if not isinstance(document, dict) or not ("resourceSpans" in document or "resource_spans" in document):
            problems.add("not an OTLP JSON document (no resourceSpans)", number)
            continue
        yield from _document_spans(document, keep, problems, number)


def _document_spans(document: Mapping[str, Any], keep: Keep, problems: Problems, line: int | None) -> Iterator[Span]:
    for resource_spans in _list(document, "resourceSpans", "resource_spans"):
        if not isinstance(resource_spans, Mapping):
            continue
        resource = decode_resource(problems, line, resource_spans.get("resource"), keep)
        for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans"):
            if not isinstance(scope_spans, Mapping):
                continue
            for raw in _list(scope_spans, "spans", "spans"):
                span = decode_span(problems, line, otlp_span, raw, resource, keep)
                if span is not None:
                    yield span


def _list(raw: Mapping[str, Any], camel: str, snake: str) -> list[Any]:
    value = raw.get(camel, raw.get(snake))
    return value if isinstance(value, list) else []


def read_assay(stream: IO[bytes], keep: Keep, problems: Problems) -> Iterator[Span]:
    for number, row in _rows(stream, problems):
        if not isinstance(row, dict):
            problems.add("an Assay span row must be a JSON object", number)
            continue
        span = decode_span(problems, number, assay_span, row, keep)
        if span is not None:
            yield span
