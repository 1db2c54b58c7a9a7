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

import gzip
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

from behavegate.evidence.traces.line_formats import read_assay, read_jsonl
from behavegate.evidence.traces.problems import Problems
from behavegate.evidence.traces.spans import Keep, Span, console_shaped
from behavegate.evidence.traces.text_formats import read_console, read_document
from behavegate.limits import TRACE_READ_CHUNK

FORMATS = ("otlp-json", "otlp-jsonl", "proto3-json", "console", "assay")
_FIRST_KEY = re.compile(r'\s*\{\s*"([A-Za-z_]+)"')


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
        first_line, newline, _ = start.partition("\n")
        try:
            row = json.loads(first_line)
        except ValueError:
            row = None
        if row is None and not newline and _FIRST_KEY.match(start):  # a first line longer than the head:
            return "otlp-json"  # the document reader reads one document, or one a line, alike
        if isinstance(row, dict):
            if "resourceSpans" in row or "resource_spans" in row:
                # One document on one line is OTLP JSON; more lines of them, JSON Lines.
                return "otlp-jsonl" if start[len(first_line) :].strip() else "otlp-json"
            if console_shaped(row):
                return "console"
            if "trace_id" in row and "span_id" in row:
                return "assay"
            return None
        match = _FIRST_KEY.match(start)
        if match and match.group(1) in ("resourceSpans", "resource_spans"):
            return "otlp-json"
    # Linear: no pattern here can backtrack over a run of blank lines.
    if re.search(r'(?m)^\{[ \t]*\n[ \t]*"name":[^\n]*\n[ \t]*"context":[ \t]*\{', text):
        return "console"
    return None


READERS: dict[str, Callable[[IO[bytes], Keep, Problems], Iterator[Span]]] = {
    "otlp-json": read_document,
    "otlp-jsonl": read_jsonl,
    "console": read_console,
    "assay": read_assay,
}


def reader_for(fmt: str, head: bytes) -> Callable[[IO[bytes], Keep, Problems], Iterator[Span]] | None:
    """The reader of a named or sniffed format; ``proto3-json`` is OTLP read leniently."""
    if fmt == "proto3-json":
        sniffed = sniff(head)
        fmt = sniffed if sniffed in ("otlp-json", "otlp-jsonl") else "otlp-json"
    return READERS.get(fmt)


def new_problems(where: str) -> Problems:
    return Problems(where)
