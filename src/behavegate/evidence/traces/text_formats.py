"""The text-stream formats: one OTLP JSON document (compact or pretty, or several in a row)
walked structurally, and the Python console exporter's concatenated objects between log
lines; each value decoded on its own from a buffer refilled a chunk at a time."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import IO, Any

from behavegate.evidence.traces.messages import SURROGATE_PROBLEM
from behavegate.evidence.traces.problems import Problems, decode_resource, decode_span
from behavegate.evidence.traces.spans import Keep, Span, console_shaped, console_span, otlp_span
from behavegate.limits import TRACE_MAX_CONTAINERS, TRACE_MAX_OBJECT_BYTES, TRACE_READ_CHUNK
from behavegate.magnitude import integer_text
from behavegate.text import surrogate_paths

_WHITESPACE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder(parse_int=integer_text)  # a 5,000-digit integer: refused in a short message
_SURROGATE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")


class _Text:
    """Decoded text over a byte stream, refilled as values are decoded."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()  # a byte order mark is dropped
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.started = False
        # Line numbers are counted on from a mark, so asking for one per span costs only
        # the text since the last ask.
        self.mark_pos = 0
        self.mark_line = 1

    def line(self, pos: int | None = None) -> int:
        pos = self.pos if pos is None else pos
        if pos < self.mark_pos:
            return self.mark_line - self.buf.count("\n", pos, self.mark_pos)
        self.mark_line += self.buf.count("\n", self.mark_pos, pos)
        self.mark_pos = pos
        return self.mark_line

    def fill(self, at_least: int = 0) -> None:
        if self.eof:
            return
        data = self.stream.read(max(at_least, TRACE_READ_CHUNK))
        self.mark_line = self.line(self.pos)
        self.mark_pos = 0
        try:
            decoded = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise _Malformed(f"not UTF-8 text: {exc.reason} (byte 0x{exc.object[exc.start]:02x})", self.mark_line) from None
        if len(self.buf) - self.pos > TRACE_MAX_CONTAINERS and (
            self.buf.count("{", self.pos) + self.buf.count("[", self.pos) > TRACE_MAX_CONTAINERS
        ):
            raise _Malformed(f"more than {TRACE_MAX_CONTAINERS} JSON objects and arrays in one value", self.mark_line)
        self.buf = self.buf[self.pos :] + decoded
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
            except ValueError as exc:  # an integer too long to convert (magnitude.integer_text)
                raise _Malformed(f"invalid JSON: {exc}", self.line()) from None
            except RecursionError:
                raise _Malformed("JSON nested too deeply", self.line()) from None
            if end == len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.fill()
                continue
            if _SURROGATE_TEXT.search(self.buf, self.pos, end) and surrogate_paths(value, "value"):
                raise _Malformed(SURROGATE_PROBLEM, self.line())
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
        # Not a log line to skip: the file itself cannot be read on (bad bytes, a value too big).
        self.fatal = not message.startswith(("invalid JSON", "JSON nested"))


def _maybe_truncated(exc: json.JSONDecodeError, length: int) -> bool:
    # Running out of text looks like an error at (or a literal's length before) the end,
    # or an unterminated string that started anywhere.
    return exc.msg.startswith("Unterminated string") or exc.pos >= length - 16


def read_document(stream: IO[bytes], keep: Keep, problems: Problems) -> Iterator[Span]:
    """One OTLP JSON document, or several in a row (JSON Lines whose lines are too long
    to sniff): each walked without being read whole."""
    text = _Text(stream)
    try:
        while True:
            yield from _one_document(text, keep, problems)
            if not text.peek():
                return
            if text.peek() != "{":
                raise _Malformed("text after the OTLP JSON document", text.line())
    except _Malformed as bad:
        problems.add(str(bad), bad.line)


def _one_document(text: _Text, keep: Keep, problems: Problems) -> Iterator[Span]:
    for key in text.members():
        if key not in ("resourceSpans", "resource_spans"):
            text.value()
            continue
        for _ in text.elements():
            resource: dict[str, Any] = {}  # filled when its key comes, before or after the spans
            for part in text.members():
                if part == "resource":
                    resource.update(decode_resource(problems, text.line(), text.value(), keep))
                elif part in ("scopeSpans", "scope_spans"):
                    yield from _scope_spans(text, resource, keep, problems)
                else:
                    text.value()


def _scope_spans(text: _Text, resource: dict[str, Any], keep: Keep, problems: Problems) -> Iterator[Span]:
    for _ in text.elements():
        for key in text.members():
            if key != "spans":
                text.value()
                continue
            for _ in text.elements():
                line = text.line()
                raw = text.value()
                span = decode_span(problems, line, otlp_span, raw, resource, keep)
                if span is not None:
                    yield span


def read_console(stream: IO[bytes], keep: Keep, problems: Problems) -> Iterator[Span]:
    """Objects that start a line, between lines of anything else (application logs)."""
    text = _Text(stream)
    try:
        while _next_object(text):
            line = text.line()
            try:
                value = text.value()
            except _Malformed as bad:
                if bad.fatal:
                    raise
                if text.eof and _looks_like_span(text.buf, text.pos):
                    problems.add("truncated span object at the end of the file", line)
                    return
                text.pos += 1  # a log line that starts with '{': skip it
                continue
            if console_shaped(value):
                span = decode_span(problems, line, console_span, value, keep)
                if span is not None:
                    yield span
    except _Malformed as bad:
        problems.add(str(bad), bad.line)


def _next_object(text: _Text) -> bool:
    """Move to the next '{' at the start of a line; False at the end of the file."""
    while True:
        if not text.started:
            text.started = True
            if not text.buf:
                text.fill()
            if text.buf[:1] == "{":
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
