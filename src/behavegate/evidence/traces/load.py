"""The entry point for commands: trace files (or folders of them) read, their
spans assembled into traces, each trace normalized.

Files are opened as every evidence file is (inside the project or the runner's
folders, never through a symlink) and hashed as they are read: the report binds
each file's SHA-256. Spans of a trace may come from several files (a rotated
Collector output); a span seen twice (a retried export batch) counts once.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

from behavegate.errors import InputError, Problem, TraceError
from behavegate.evidence.traces import reader
from behavegate.evidence.traces.normalize import Link, TraceSpans, normalize
from behavegate.evidence.traces.record import Trace
from behavegate.evidence.traces.spans import Keep, Span
from behavegate.files import base_of, reject_symlinks, resolve_inside, walk_files
from behavegate.frozen import Frozen
from behavegate.limits import TRACE_MAX_FILES, TRACE_MAX_LINKS, TRACE_MAX_SPANS, TRACE_MAX_TRACES, TRACE_READ_CHUNK

TRACE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".log", ".txt", ".gz", ".zst")  # .zst: listed as skipped
_SNIFF = 64 * 1024
_DEADLINE_EVERY = 4096  # spans between two looks at the clock


class TraceFile(Frozen):
    path: str  # as shown to people
    digest: str  # SHA-256 of the file's bytes
    format: str
    bytes: int
    spans: int


class TraceSet(Frozen):
    files: tuple[TraceFile, ...]
    traces: tuple[Trace, ...]  # traces with GenAI content, in order of first appearance
    ignored: int  # traces without GenAI content
    duplicates: int  # spans read twice
    skipped: tuple[tuple[str, str], ...] = ()  # files in a named folder that are not trace files: (path, why)


class _Prefixed(io.RawIOBase):
    """Bytes already read (to sniff the format), then the rest of the stream; the run's
    time budget is looked at on every read, so no input (a gzip bomb, a file with no
    spans at all) can hold the run past it."""

    def __init__(self, prefix: bytes, rest: IO[bytes] | io.RawIOBase, check_time: Callable[[], None] = lambda: None) -> None:
        self.prefix = prefix
        self.rest = rest
        self.check_time = check_time

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n] = self.prefix[:n]
            self.prefix = self.prefix[n:]
            return n
        self.check_time()
        data = self.rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class TracePath(NamedTuple):
    path: Path
    named: bool  # named on the command line (else found in a named folder)


def trace_paths(arguments: Sequence[str], root: Path, bases: tuple[Path, ...] = ()) -> list[TracePath]:
    """Every file named, and every trace file under every folder named (sorted, no links, no hidden)."""
    found: list[TracePath] = []
    for argument in arguments:
        if Path(argument) in (Path("."), root):  # the project folder itself
            path = root
        else:
            path = resolve_inside(argument, root, "Trace file", bases)
            reject_symlinks(path, base_of(path, root, bases), "Trace file")
        if path.is_dir():
            found.extend(TracePath(inner, False) for inner in walk_files(path, TRACE_SUFFIXES))
        elif path.exists():
            found.append(TracePath(path, True))
        else:
            raise InputError(f"Trace file not found: {argument}")
        if len(found) > TRACE_MAX_FILES:
            raise InputError(f"more than {TRACE_MAX_FILES} trace files; name fewer folders")
    if not found:
        raise InputError(
            f"no trace files found in {', '.join(arguments)} (looked for {', '.join('*' + s for s in TRACE_SUFFIXES)})"
        )
    unique: dict[Path, TracePath] = {}
    for item in found:
        unique[item.path] = TracePath(item.path, item.named or (item.path in unique and unique[item.path].named))
    return list(unique.values())


def read_traces(
    paths: Sequence[TracePath],
    *,
    fmt: str | None = None,
    attribute: str,
    shown: Callable[[Path], str] = str,
    check_time: Callable[[], None] = lambda: None,
) -> TraceSet:
    """Read, assemble and normalize. ``check_time`` raises when the run's budget is spent."""
    assembly = _Assembly()
    files: list[TraceFile] = []
    skipped: list[tuple[str, str]] = []
    for item in paths:
        try:
            files.append(_read_file(item.path, shown(item.path), fmt, Keep((attribute,)), assembly, check_time))
        except _NotTraces as why:
            if item.named:  # a file named on purpose must be read; one in a folder may be anything
                raise TraceError([Problem(str(why), shown(item.path))]) from None
            skipped.append((shown(item.path), str(why)))
    normalized = []
    for spans in assembly.traces_read():
        check_time()  # judging what was read counts against the run's budget too
        normalized.append(normalize(spans, attribute))
    found = tuple(trace for trace in normalized if trace is not None)
    ignored = len(normalized) - len(found) + len({key.rpartition("/")[0] for key in assembly.parents} - set(assembly.traces))
    return TraceSet(tuple(files), found, ignored, assembly.duplicates, tuple(skipped))


class _NotTraces(Exception):
    """The file is not in a trace format (the message says what it seems to be)."""


class _Assembly:
    """Spans grouped by trace as they are read. A span with GenAI content is kept whole
    under its trace; any other span only as a parent link in one flat map (no container
    per trace), since most of them belong to traces that will turn out to hold no GenAI
    content and be dropped: memory follows the GenAI spans, not the file."""

    def __init__(self) -> None:
        self.traces: dict[str, tuple[dict[str, Span], int, str]] = {}  # trace id -> (spans, order, file)
        self.parents: dict[str, str | None] = {}  # "trace id/span id" -> parent span id
        self.kept = 0
        self.duplicates = 0

    def add(self, span: Span, where: str) -> None:
        key = f"{span.trace_id}/{span.span_id}"
        entry = self.traces.get(span.trace_id)
        if span.attributes or span.events:
            if entry is None:
                if len(self.traces) >= TRACE_MAX_TRACES:
                    raise TraceError([Problem(f"more than {TRACE_MAX_TRACES} GenAI traces in one run", where)])
                entry = self.traces[span.trace_id] = ({}, len(self.traces), where)
            if span.span_id in entry[0] or key in self.parents:
                self._repeated(span.span_id in entry[0] and entry[0][span.span_id] == span, span, where)
                return
            entry[0][span.span_id] = span
            self.kept += 1
            if self.kept > TRACE_MAX_SPANS:
                raise TraceError([Problem(f"more than {TRACE_MAX_SPANS} GenAI spans in one run", where)])
            return
        if key in self.parents or (entry is not None and span.span_id in entry[0]):
            self._repeated(key in self.parents and self.parents[key] == span.parent_id, span, where)
            return
        if len(self.parents) >= TRACE_MAX_LINKS:
            raise TraceError([Problem(f"more than {TRACE_MAX_LINKS} spans without GenAI content in one run", where)])
        self.parents[key] = span.parent_id

    def _repeated(self, same: bool, span: Span, where: str) -> None:
        # A retried export repeats a span; one that differs would make the verdict
        # depend on which copy came first, so it is refused.
        if not same:
            raise TraceError(
                [Problem(f"span {span.span_id} of trace {span.trace_id} appears twice with different content", where)]
            )
        self.duplicates += 1

    def traces_read(self) -> Iterator[TraceSpans]:
        """Each trace with GenAI content, its spans linked to every span of its trace."""
        links: dict[str, dict[str, Link]] = {trace_id: {} for trace_id in self.traces}
        for key, parent in self.parents.items():
            trace_id, _, span_id = key.rpartition("/")
            if trace_id in links:
                links[trace_id][span_id] = Link(parent, None, None)
        for trace_id, (spans, order, file) in self.traces.items():
            linked = links.pop(trace_id)
            linked.update((span.span_id, Link(span.parent_id, span.start_ns, span.end_ns)) for span in spans.values())
            yield TraceSpans(trace_id, file, order, list(spans.values()), linked)


def _read_file(
    path: Path, where: str, fmt: str | None, keep: Keep, assembly: _Assembly, check_time: Callable[[], None]
) -> TraceFile:
    check_time()
    problems = reader.new_problems(where)
    count = 0
    base64_ids = False
    with _open(path, where) as raw:
        hashing = reader.HashingReader(raw)
        try:
            head = hashing.read(_SNIFF) or b""
            stream = reader.open_stream(_Prefixed(head, hashing), head)
            text_head = stream.read(_SNIFF) or b""
        except ValueError as exc:  # a compression behavegate does not read
            raise _NotTraces(str(exc)) from None
        except (OSError, EOFError) as exc:
            raise TraceError([Problem(f"cannot read the trace file: {exc}", where)]) from None
        found = fmt or reader.sniff(text_head)
        # Console output may begin with more log lines than the sniffed head holds: text
        # that is nothing else is read as console output, and is a trace file if spans come.
        guessed = found is None and b"\x00" not in text_head[:4096] and _utf8(text_head)
        found = "console" if guessed else found
        read = reader.reader_for(found, text_head) if found else None
        if found is None or read is None:
            raise _NotTraces(_unknown_format(text_head))
        body = io.BufferedReader(_Prefixed(text_head, stream, check_time), buffer_size=TRACE_READ_CHUNK)
        try:
            for span in read(body, keep, problems):
                count += 1
                base64_ids = base64_ids or span.base64_ids
                assembly.add(span, where)
        except (OSError, EOFError) as exc:  # a truncated gzip member, a read error
            problems.add(f"cannot read the trace file: {exc}", None)
        if guessed and not count:
            raise _NotTraces(_unknown_format(text_head))
        if fmt and not count and text_head.strip():
            problems.add(f"no spans read as {fmt}: is it in another format? Leave out --trace-format to have it told", None)
        problems.raise_found()
        hashing.read_rest()
    shown_format = "proto3-json" if base64_ids and found in ("otlp-json", "otlp-jsonl") else found
    return TraceFile(where, hashing.sha.hexdigest(), shown_format, hashing.size, count)


@contextlib.contextmanager
def _open(path: Path, where: str) -> Iterator[IO[bytes]]:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError(f"Trace file could not be opened: {where}", f"Trace file {where}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"Trace file must be a regular file: {where}")
        handle = os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def _unknown_format(head: bytes) -> str:
    if b"\x00" in head[:4096] or not _utf8(head):
        return "not a JSON trace file (binary: a Collector file exporter with format: proto?); export it as JSON"
    return (
        "could not tell the trace format (OTLP JSON, OTLP JSON Lines, Python console output or Assay rows); "
        "name it with --trace-format"
    )


def _utf8(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 4  # a character cut by the sniffing window
    return True
