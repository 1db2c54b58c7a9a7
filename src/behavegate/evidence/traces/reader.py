"""Trace files read as a stream of spans, never whole.

Formats (``sniff`` tells them apart; ``--trace-format`` names one):

* ``otlp-json``: one ``ExportTraceServiceRequest`` document, compact or pretty;
  walked structurally, each span decoded on its own.
* ``otlp-jsonl``: one document per line (Collector ``file`` exporter, the
  Python JSON file exporter); a trace may be split across lines.
* ``proto3-json``: either of the above written by a generic protobuf-to-JSON
  converter (base64 ids, enum names, snake_case keys): the same readers, whose
  decoding is lenient.
* ``console``: the Python ``ConsoleSpanExporter``'s concatenated pretty objects,
  possibly between application log lines.
* ``assay``: Assay's flat span rows, one per line.

Memory: one chunk of text plus the value being decoded (at most
``TRACE_MAX_OBJECT_BYTES``); spans go to the caller as they are decoded.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

from behavegate.errors import Problem, TraceError
from behavegate.evidence.traces.spans import Keep, Span, SpanShapeError, assay_span, console_span, otlp_resource, otlp_span
from behavegate.limits import TRACE_MAX_OBJECT_BYTES, TRACE_MAX_PROBLEMS, TRACE_READ_CHUNK
from behavegate.text import scrub

FORMATS = ("otlp-json", "otlp-jsonl", "proto3-json", "console", "assay")
_WHITESPACE = re.compile(r"[ \t\r\n]*")
_FIRST_KEY = re.compile(r'\s*\{\s*"([A-Za-z_]+)"')
_DECODER = json.JSONDecoder()
# A "\ud800" escape decodes to text no report can hold: such values are shown with U+FFFD.
_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")
_SNIFF_BYTES = 64 * 1024


class _Problems:
    """Problems of one file, each with its line; reading goes on until there are too many."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.found: list[Problem] = []

    def add(self, message: str, line: int | None) -> None:
        self.found.append(Problem(message, self.where, line))
        if len(self.found) >= TRACE_MAX_PROBLEMS:
            self.raise_found(more=True)

    def raise_found(self, more: bool = False) -> None:
        if self.found:
            problems = list(self.found)
            if more:
                problems.append(Problem(f"stopped reading after {len(problems)} problems", self.where))
            raise TraceError(problems)


class HashingReader(io.RawIOBase):
    """The file's bytes as they are read, hashed on the way (the evidence digest)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.sha = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        self.sha.update(data)
        self.size += len(data)
        buffer[: len(data)] = data
        return len(data)

    def read_rest(self) -> None:
        while True:
            data = self.raw.read(TRACE_READ_CHUNK)
            if not data:
                return
            self.sha.update(data)
            self.size += len(data)


def open_stream(raw: io.RawIOBase, head: bytes) -> IO[bytes]:
    """The bytes to parse: gzip is read through; other compressions are named, not guessed."""
    buffered = io.BufferedReader(raw, buffer_size=TRACE_READ_CHUNK)
    if head[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    if head[:4] == b"\x28\xb5\x2f\xfd":
        raise ValueError("zstd-compressed; decompress it first (zstd -d FILE)")
    return buffered


def sniff(head: bytes) -> str | None:
    """The format of a file from its first bytes, or None when it cannot be told."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    start = text.lstrip()
    if not start:
        return None
    if start[0] == "{":
        first_line = start.split("\n", 1)[0]
        try:
            row = json.loads(first_line)
        except ValueError:
            row = None
        if isinstance(row, dict):
            if "resourceSpans" in row or "resource_spans" in row:
                # One document on one line is OTLP JSON; more lines of them, JSON Lines.
                return "otlp-jsonl" if start[len(first_line) :].strip() else "otlp-json"
            if "context" in row and "name" in row:
                return "console"
            if "trace_id" in row and "span_id" in row:
                return "assay"
            return None
        match = _FIRST_KEY.match(start)
        if match and match.group(1) in ("resourceSpans", "resource_spans"):
            return "otlp-json"
    if re.search(r'(?m)^\{\s*\n\s*"name":[^\n]*\n\s*"context":\s*\{', text):
        return "console"
    return None


# --- line formats (OTLP JSON Lines, Assay rows) -------------------------------------------------


def _lines(stream: IO[bytes], problems: _Problems) -> Iterator[tuple[int, bytes]]:
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


def _json_line(line: bytes, number: int, problems: _Problems) -> Any:
    try:
        value = json.loads(line)
        return scrub(value) if _SURROGATE_BYTES.search(line) else value
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        truncated = not line.endswith(b"\n")
        problems.add(f"{'truncated' if truncated else 'invalid'} JSON: {exc}", number)
        return None


def _rows(stream: IO[bytes], problems: _Problems) -> Iterator[tuple[int, Any]]:
    """Each line's JSON value with its line number (lines that are not JSON are problems)."""
    for number, line in _lines(stream, problems):
        value = _json_line(line, number, problems)
        if value is not None:
            yield number, value


def read_jsonl(stream: IO[bytes], keep: Keep, problems: _Problems) -> Iterator[Span]:
    for number, document in _rows(stream, problems):
        if not isinstance(document, dict) or not ("resourceSpans" in document or "resource_spans" in document):
            problems.add("not an OTLP JSON document (no resourceSpans)", number)
            continue
        yield from _document_spans(document, keep, problems, number)


def _document_spans(document: Mapping[str, Any], keep: Keep, problems: _Problems, line: int | None) -> Iterator[Span]:
    for resource_spans in _list(document, "resourceSpans", "resource_spans"):
        if not isinstance(resource_spans, Mapping):
            continue
        resource = otlp_resource(resource_spans.get("resource"), keep)
        for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans"):
            if not isinstance(scope_spans, Mapping):
                continue
            for raw in _list(scope_spans, "spans", "spans"):
                span = _decode(problems, line, otlp_span, raw, resource, keep)
                if span is not None:
                    yield span


def _list(raw: Mapping[str, Any], camel: str, snake: str) -> list[Any]:
    value = raw.get(camel, raw.get(snake))
    return value if isinstance(value, list) else []


def _decode(problems: _Problems, line: int | None, make: Callable[..., Span], *args: Any) -> Span | None:
    try:
        return make(*args)
    except (SpanShapeError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        problems.add(f"unreadable span: {exc or type(exc).__name__}", line)
        return None


def read_assay(stream: IO[bytes], keep: Keep, problems: _Problems) -> Iterator[Span]:
    for number, row in _rows(stream, problems):
        if not isinstance(row, dict):
            problems.add("an Assay span row must be a JSON object", number)
            continue
        span = _decode(problems, number, assay_span, row, keep)
        if span is not None:
            yield span


# --- text-stream formats (one OTLP document, console dumps) -------------------------------------


class _Text:
    """Decoded text over a byte stream, refilled as values are decoded."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()  # a byte order mark is dropped
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.lines_before = 0  # newlines in text already dropped from the buffer

    def line(self, pos: int | None = None) -> int:
        return self.lines_before + self.buf.count("\n", 0, self.pos if pos is None else pos) + 1

    def fill(self, at_least: int = 0) -> None:
        if self.eof:
            return
        data = self.stream.read(max(at_least, TRACE_READ_CHUNK))
        self.lines_before += self.buf.count("\n", 0, self.pos)
        self.buf = self.buf[self.pos :] + self.decoder.decode(data, final=not data)
        self.pos = 0
        self.eof = not data

    def peek(self) -> str:
        while True:
            match = _WHITESPACE.match(self.buf, self.pos)
            assert match is not None
            self.pos = match.end()
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos] if self.pos < len(self.buf) else ""
            self.fill()

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise _Malformed(f"expected {char!r}, found {found or 'the end of the file'!r}", self.line())
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof or not _maybe_truncated(exc, len(self.buf)):
                    raise _Malformed(f"invalid JSON: {exc.msg}", self.line(exc.pos)) from None
                if len(self.buf) - self.pos > TRACE_MAX_OBJECT_BYTES:
                    raise _Malformed(f"a value longer than {TRACE_MAX_OBJECT_BYTES} characters", self.line()) from None
                self.fill(len(self.buf) - self.pos)  # doubling: a long value costs linear time
                continue
            except RecursionError:
                raise _Malformed("JSON nested too deeply", self.line()) from None
            if end == len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.fill()
                continue
            if _SURROGATE_TEXT.search(self.buf, self.pos, end):
                value = scrub(value)
            self.pos = end
            return value

    def members(self) -> Iterator[str]:
        """The keys of the object at the cursor; the caller consumes each value."""
        self.expect("{")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise _Malformed("an object key must be a string", self.line())
            self.expect(":")
            yield key
            found = self.peek()
            self.pos += 1
            if found == "}":
                return
            if found != ",":
                raise _Malformed(f"expected ',' or '}}', found {found or 'the end of the file'!r}", self.line())

    def elements(self) -> Iterator[None]:
        self.expect("[")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            yield
            found = self.peek()
            self.pos += 1
            if found == "]":
                return
            if found != ",":
                raise _Malformed(f"expected ',' or ']', found {found or 'the end of the file'!r}", self.line())


class _Malformed(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def _maybe_truncated(exc: json.JSONDecodeError, length: int) -> bool:
    # Running out of text looks like an error at (or a literal's length before) the end,
    # or an unterminated string that started anywhere.
    return exc.msg.startswith("Unterminated string") or exc.pos >= length - 16


def read_document(stream: IO[bytes], keep: Keep, problems: _Problems) -> Iterator[Span]:
    text = _Text(stream)
    try:
        for key in text.members():
            if key not in ("resourceSpans", "resource_spans"):
                text.value()
                continue
            for _ in text.elements():
                resource: dict[str, Any] = {}  # filled when its key comes, before or after the spans
                for part in text.members():
                    if part == "resource":
                        resource.update(otlp_resource(text.value(), keep))
                    elif part in ("scopeSpans", "scope_spans"):
                        yield from _scope_spans(text, resource, keep, problems)
                    else:
                        text.value()
        if text.peek():
            raise _Malformed(
                "text after the OTLP JSON document: if the file holds one document per line, it is JSON Lines (--trace-format otlp-jsonl, or leave the flag out)",
                text.line(),
            )
    except _Malformed as bad:
        problems.add(str(bad), bad.line)


def _scope_spans(text: _Text, resource: dict[str, Any], keep: Keep, problems: _Problems) -> Iterator[Span]:
    for _ in text.elements():
        for key in text.members():
            if key != "spans":
                text.value()
                continue
            for _ in text.elements():
                line = text.line()
                raw = text.value()
                span = _decode(problems, line, otlp_span, raw, resource, keep)
                if span is not None:
                    yield span


def read_console(stream: IO[bytes], keep: Keep, problems: _Problems) -> Iterator[Span]:
    """Objects that start a line, between lines of anything else (application logs)."""
    text = _Text(stream)
    while _next_object(text):
        line = text.line()
        try:
            value = text.value()
        except _Malformed:
            if text.eof and _looks_like_span(text.buf, text.pos):
                problems.add("truncated span object at the end of the file", line)
                return
            text.pos += 1  # a log line that starts with '{': skip it
            continue
        if isinstance(value, dict) and "context" in value:
            span = _decode(problems, line, console_span, value, keep)
            if span is not None:
                yield span


def _next_object(text: _Text) -> bool:
    """Move to the next '{' at the start of a line; False at the end of the file."""
    while True:
        if text.pos == 0 and text.lines_before == 0 and text.buf[:1] == "{":
            return True
        found = text.buf.find("\n{", text.pos)
        if found >= 0:
            text.pos = found + 1
            return True
        if text.eof:
            text.pos = len(text.buf)
            return False
        text.pos = max(len(text.buf) - 1, text.pos)  # a newline at the end may start the next object
        text.fill()


def _looks_like_span(buf: str, start: int) -> bool:
    return '"context"' in buf[start : start + 4096] or '"trace_id"' in buf[start : start + 4096]


READERS: dict[str, Callable[[IO[bytes], Keep, _Problems], Iterator[Span]]] = {
    "otlp-json": read_document,
    "otlp-jsonl": read_jsonl,
    "console": read_console,
    "assay": read_assay,
}


def reader_for(fmt: str, head: bytes) -> Callable[[IO[bytes], Keep, _Problems], Iterator[Span]] | None:
    """The reader of a named or sniffed format; ``proto3-json`` is OTLP read leniently."""
    if fmt == "proto3-json":
        sniffed = sniff(head)
        fmt = sniffed if sniffed in ("otlp-json", "otlp-jsonl") else "otlp-json"
    return READERS.get(fmt)


def new_problems(where: str) -> _Problems:
    return _Problems(where)
