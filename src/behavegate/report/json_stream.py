"""The JSON report of a run judged a part at a time (commands/stream_offline.py).

The text is the one :meth:`Report.json_chunks` writes for the same run, byte for byte, but
the run is never held: as each scenario is judged, the pieces of it the report shows (its
entry, its observation, where it is written, its tags) go to spool files, and the document
is written from them at the end. Keys sort, and the run's totals and digests sort before
``scenarios`` (``coverage``, ``evidence_digest``, ``provenance``), so nothing can be written
before the last scenario is judged; what stays in memory is a scenario's id and a few
offsets.
"""

from __future__ import annotations

import json
import secrets
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, overload

from behavegate.canonical_json import canonical_bytes
from behavegate.indented_json import indent
from behavegate.report.json_text import EncodedReport, chunks

COMPACT = json.JSONEncoder(sort_keys=True, separators=(",", ":"))  # as json_text writes the other keys
_BATCH = 256
_READ = 1 << 20


class Spool(Sequence[bytes]):
    """Byte records appended to a file, read back by index or slice (a run's scenario
    entries: ~9 KB each at 10 assertions, 100,000 of them)."""

    def __init__(self, path: Path) -> None:
        self._file: IO[bytes] = path.open("w+b")
        self._ends = array("q")
        self._size = 0
        self.items = 0  # the ",[{:" bytes of every record: how json_text bounds the indented size

    def add(self, record: bytes) -> None:
        self._file.write(record)
        self._size += len(record)
        self._ends.append(self._size)

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> bytes: ...
    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...
    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, int):
            return self._read(index, index + 1)[0]
        start, stop, step = index.indices(len(self))
        if step != 1:
            raise ValueError("a spool is read in order")
        return self._read(start, stop) if start < stop else []

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self), _BATCH):
            yield from self._read(start, min(start + _BATCH, len(self)))

    def _read(self, start: int, stop: int) -> list[bytes]:
        first = self._ends[start - 1] if start else 0
        self._file.flush()
        self._file.seek(first)
        data = self._file.read(self._ends[stop - 1] - first)
        out, at = [], 0
        for end in self._ends[start:stop]:
            out.append(data[at : end - first])
            at = end - first
        return out

    def close(self) -> None:
        self._file.close()


class KeyedSpool:
    """Records by scenario id, read back in the order of their ids (a JSON object's keys sort)."""

    def __init__(self, path: Path) -> None:
        self.spool = Spool(path)
        self.keys: list[str] = []

    def add(self, key: str, record: bytes) -> None:
        self.keys.append(key)
        self.spool.add(record)

    def sorted(self) -> Iterator[tuple[str, bytes]]:
        for index in sorted(range(len(self.keys)), key=self.keys.__getitem__):
            yield self.keys[index], self.spool[index]


def selected_digest(observations: KeyedSpool) -> str:
    """report/digests.selected_digest over spooled observations (canonical bytes each)."""
    import hashlib

    hasher = hashlib.sha256(b'{"scenarios":[')
    for number, (_, record) in enumerate(observations.sorted()):
        hasher.update(b"," + record if number else record)
    hasher.update(b'],"version":1}')
    return hasher.hexdigest()


def observation_bytes(value: Mapping[str, Any]) -> bytes:
    return canonical_bytes(value)


class Placeholder:
    """Big values of the ``rest`` keys (``behavegate.scenarios``, ``harness.completed_phases``),
    each stood in for by an unguessable string and written in pieces where it stands."""

    def __init__(self) -> None:
        self.parts: dict[str, tuple[Callable[[], Iterator[str]], bool]] = {}  # token's JSON text -> members, mapping

    def add(self, members: Callable[[], Iterator[str]], *, mapping: bool) -> str:
        """A token for a container whose members (compact JSON: ``"key":value`` or ``value``)
        ``members`` yields, in order."""
        token = f"behavegate-stream-{secrets.token_hex(16)}"
        self.parts[json.dumps(token)] = (members, mapping)
        return token


def written(
    encoded: EncodedReport, rest: Mapping[str, Any], placeholders: Placeholder, measure: Callable[[str, int], None]
) -> Iterator[str]:
    """The report's text (:func:`json_text.chunks`) with every placeholder written where it
    stands. ``measure(key, characters)`` is told the length of each top-level key's text."""
    key = ""
    for piece in chunks(encoded, rest):
        if piece.startswith((",\n  ", "\n  ")) and piece.endswith('": '):
            key = json.loads(piece[piece.index('"') : -2])
        for text in _expanded(piece, placeholders):
            measure(key, len(text))
            yield text


def _expanded(piece: str, placeholders: Placeholder) -> Iterator[str]:
    for token, (members, mapping) in placeholders.parts.items():
        at = piece.find(token)
        if at < 0:
            continue
        before, after = piece[:at], piece[at + len(token) :]
        yield from _expanded(before, placeholders)
        line = before[before.rfind("\n") + 1 :]
        depth = (len(line) - len(line.lstrip(" "))) // 2  # the key's; its members sit one deeper
        yield from _indented(members(), mapping, depth)
        yield from _expanded(after, placeholders)
        return
    yield piece


def _indented(members: Iterator[str], mapping: bool, depth: int) -> Iterator[str]:
    """A container as ``indent`` writes it when its key is at ``depth``: members a batch at
    a time, each batch wrapped as ``{"s": [...]}`` so one C call indents it (json_text's trick)."""
    opening, closing = ("{", "}") if mapping else ("[", "]")
    shift = "\n" + "  " * (depth - 1)
    batch: list[str] = []
    first = True
    for member in members:
        batch.append(member)
        if len(batch) == _BATCH:
            yield _batch(batch, opening, closing, first, shift)
            batch, first = [], False
    if batch:
        yield _batch(batch, opening, closing, first, shift)
    elif first:
        yield opening + closing
        return
    yield "\n" + "  " * depth + closing


_HEAD = '{\n  "s": '


def _batch(batch: list[str], opening: str, closing: str, first: bool, shift: str) -> str:
    text = indent('{"s":' + opening + ",".join(batch) + closing + "}")
    inner = text[len(_HEAD) + 1 : -len("\n  " + closing + "\n}")]  # "\n    member,\n    member"
    if shift != "\n":
        inner = inner.replace("\n", shift)
    return (opening if first else ",") + inner
