"""A version-2 contract's own ``scenarios:`` read a part at a time (commands/stream_offline.py).

The parsed document (and its line map) is what the parse made; only a part's Scenarios, and
what judging them makes, are held beyond it. Each part is read by the reader that reads the
whole contract, with the part's list in the document's place: its items keep their lines, so
a scenario's line and its assertions' lines are the ones the whole-run path reports. A
problem's path would name the item's place in the part, not in the list, so the caller gives
way to the whole-run path on any problem (which then words it as it always has).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from behavegate.contract.load import _Reader
from behavegate.contract.yaml_lines import LineMap
from behavegate.model import Contract


def inline_parts(raw: dict[str, Any], lines: LineMap, path: Path, root: Path, digest: str, size: int) -> Iterator[Contract]:
    """The contract ``raw`` (parsed from ``path``, whose text hashes to ``digest``) with its
    ``scenarios`` list ``size`` items at a time; ``raw`` is as it was once this is done."""
    whole = raw["scenarios"]
    item_lines = lines.items.get(id(whole), [])
    try:
        for start in range(0, len(whole), size):
            part = whole[start : start + size]
            # Registered by the part's identity while it is alive, and dropped with it, so a later
            # object given the same identity is never taken for it.
            lines.items[id(part)] = item_lines[start : start + size]
            if (begins := lines.of(whole)) is not None:
                lines.starts[id(part)] = begins
            raw["scenarios"] = part
            try:
                yield _Reader(lines).contract(raw, path=path, root=root, digest=digest)
            finally:
                del lines.items[id(part)]
                lines.starts.pop(id(part), None)
    finally:
        raw["scenarios"] = whole
