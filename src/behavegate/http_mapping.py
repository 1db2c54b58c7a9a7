"""A custom HTTP agent (``agent.http``, version 2): its request template and the paths
that say where its answer holds the evidence. The contract reader builds these values
(contract/v2_http.py) and the live path uses them (evidence/http_agent.py); the path
syntax and the placeholder syntax live here because both sides read them.

A path is ``answer``, ``data.reply.text``, ``choices[0].message.content``,
``messages[-1].text`` or ``result["key.with.dots"]``; ``$`` alone is the whole answer
(``$.answer`` is ``answer``). A placeholder is ``{{prompt}}``, ``{{messages}}``,
``{{tools}}``, ``{{model}}`` or ``{{max_tokens}}``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from behavegate.frozen import Frozen, field

PLACEHOLDERS = ("prompt", "messages", "tools", "model", "max_tokens", "mcp_url")
# Only text can be spliced into a longer string ("Question: {{prompt}}"); the others are whole values.
INLINE_PLACEHOLDERS = ("prompt", "model", "mcp_url")
PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")
MAX_PATH_SEGMENTS = 32

_SEGMENT = re.compile(r'\.?([^.\[\]"\s]+)|\[(-?\d{1,9})\]|\["((?:[^"\\]|\\.)*)"\]')


class FieldPath(Frozen):
    """Where a value sits in the agent's JSON answer: object keys (str) and list indices (int)."""

    text: str  # as the contract wrote it: what a reason names
    segments: tuple[str | int, ...]


class ListPath(Frozen):
    """Where a list of calls sits: a path, in which ``[*]`` takes every item of a list on the
    way (``messages[*].parts``: every message's parts, one list). ``pieces`` are the paths
    between the expansions; the last one's value is a list whose items are the calls."""

    text: str
    pieces: tuple[FieldPath, ...]


class CallsPaths(Frozen):
    """``response.tool_calls``: the list, and within each item its name, arguments and id;
    ``where``: only the items whose value at each path equals the one given."""

    path: ListPath
    name: FieldPath
    arguments: FieldPath | None = None
    id: FieldPath | None = None
    where: tuple[tuple[FieldPath, Any], ...] = ()


class ExecutedPaths(Frozen):
    """``response.executed_calls``: the calls an agent ran itself, each with its result and
    its error (null or absent: it succeeded), judged as a trace's executed calls are."""

    path: ListPath
    name: FieldPath
    arguments: FieldPath | None = None
    id: FieldPath | None = None
    result: FieldPath | None = None
    error: FieldPath | None = None
    where: tuple[tuple[FieldPath, Any], ...] = ()


class HttpMapping(Frozen):
    """``agent.http``. ``complete`` is a path to a boolean or a finish reason, or True:
    the contract's statement that every answer the agent sends is whole."""

    request: Mapping[str, Any]  # the JSON body, with placeholders where the scenario goes
    content: FieldPath | None = None
    tool_calls: CallsPaths | None = None
    executed_calls: ExecutedPaths | None = None
    refusal: FieldPath | None = None
    sources: FieldPath | None = None
    complete: FieldPath | bool | None = None
    usage: Mapping[str, FieldPath] = field(default_factory=dict)  # USAGE_KEYS -> path

    def places(self, name: str) -> bool:
        """Whether the request template has this placeholder anywhere."""
        return any(found == name for found, _whole in placeholders_in(self.request))


def parse_path(text: str) -> FieldPath:
    """A path, or ValueError saying what is wrong with it."""
    rest = text.strip()
    if rest == "$":
        return FieldPath(text, ())
    if rest.startswith("$"):
        rest = rest[1:]
        if not rest.startswith((".", "[")):
            raise ValueError("after $ comes .key or [index]")
    elif rest.startswith("."):
        raise ValueError("a path starts with a key, [index] or $")
    segments: list[str | int] = []
    position = 0
    while position < len(rest):
        match = _SEGMENT.match(rest, position)
        if match is None or (match.group(1) is not None and position and rest[position] != "."):
            raise ValueError(f'cannot read {rest[position:][:20]!r}: use key.key, [0] or ["key"]')
        key, index, quoted = match.groups()
        if index is not None:
            segments.append(int(index))
        else:
            segments.append(key if key is not None else json.loads(f'"{quoted}"'))
        position = match.end()
    if not segments:
        raise ValueError("a path names at least one key or index (or $ for the whole answer)")
    if len(segments) > MAX_PATH_SEGMENTS:
        raise ValueError(f"a path has at most {MAX_PATH_SEGMENTS} parts")
    return FieldPath(text, tuple(segments))


def parse_list_path(text: str) -> ListPath:
    """A list path (``steps``, ``messages[*].parts``), or ValueError saying what is wrong."""
    pieces = text.strip().split("[*]")
    if len(pieces) > 1 and not pieces[-1].strip():
        pieces.pop()  # a trailing [*] says what the path means anyway: the list's items
    if len(pieces) > MAX_PATH_SEGMENTS:
        raise ValueError(f"a path has at most {MAX_PATH_SEGMENTS} parts")
    parsed = []
    for index, piece in enumerate(pieces):
        piece = piece.strip()
        if index and piece.startswith("."):
            piece = piece[1:]
        if not piece:
            if index == 0:
                raise ValueError("[*] follows a key or an index, e.g. messages[*].parts")
            piece = "$"
        parsed.append(parse_path(piece))
    return ListPath(text, tuple(parsed))


def select_items(raw: Any, path: ListPath, where: tuple[tuple[FieldPath, Any], ...] = ()) -> tuple[str, list[Any] | None, str]:
    """(``found``, ``absent`` or ``unreadable``; the items; why not): the list at ``path`` (every
    list ``[*]`` reaches, joined), keeping the items ``where`` selects; None when the list is null
    (no item). A path the answer does not have is absent; a list that is not one is unreadable:
    neither is ever an empty list."""
    values = [raw]
    for position, piece in enumerate(path.pieces):
        reached = []
        for value in values:
            found, here, why = lookup(value, piece)
            if not found:
                return "absent", None, why.replace("the answer has no", f"an item of {path.text} has no") if position else why
            reached.append(here)
        if position == len(path.pieces) - 1:
            values = reached
            break
        values = []
        for here in reached:
            if not isinstance(here, list):
                return "unreadable", None, f"{piece.text} is {kind_of(here)}, not a list to take [*] of"
            values.extend(here)
    if len(path.pieces) == 1 and values[0] is None:
        return "found", None, ""
    items: list[Any] = []
    for value in values:
        if value is None:
            continue
        if not isinstance(value, list):
            return "unreadable", None, f"{path.text} is {kind_of(value)}, not a list"
        items.extend(value)
    if where:
        # An item the filter cannot read (not an object, or without a filtered key) is no evidence that
        # it is not a call: a mistyped key would otherwise read every answer as "no call".
        for index, item in enumerate(items):
            for key, _ in where:
                found, _, why = lookup(item, key, f"{path.text} item {index}")
                if not found:
                    return "unreadable", None, f"where {key.text}: {why}"
        items = [item for item in items if all(_equals(lookup(item, key), wanted) for key, wanted in where)]
    return "found", items, ""


def _equals(found: tuple[bool, Any, str], wanted: Any) -> bool:
    """A JSON value equal to ``wanted``: Python's ``True == 1`` is no JSON equality (``{done: true}`` is not ``1``)."""
    present, value, _ = found
    return present and isinstance(value, bool) == isinstance(wanted, bool) and value == wanted


def kind_of(value: Any) -> str:
    """A JSON value's kind, as a reason says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def lookup(value: Any, path: FieldPath, where: str = "the answer") -> tuple[bool, Any, str]:
    """(found, the value, why not): absent keys, indices out of range and a step into a
    value of the wrong kind are not found, with the reason in the path's own words
    (``where``: what the path starts from, as the reason names it)."""
    here = value
    for position, segment in enumerate(path.segments):
        at = where if position == 0 else _within(where, path.segments[:position])
        if isinstance(segment, int):
            if not isinstance(here, list):
                return False, None, f"{at} is {kind_of(here)}, not a list"
            if not -len(here) <= segment < len(here):
                return False, None, f"{at} has {len(here)} items, no [{segment}]"
            here = here[segment]
        else:
            if not isinstance(here, dict):
                return False, None, f"{at} is {kind_of(here)}, not an object"
            if segment not in here:
                return False, None, f"{where} has no {path.text}"
            here = here[segment]
    return True, here, ""


def _within(where: str, segments: tuple[str | int, ...]) -> str:
    shown = format_path(segments)
    return shown if where == "the answer" else f"{where}{'' if shown.startswith('[') else '.'}{shown}"


def format_path(segments: tuple[str | int, ...]) -> str:
    parts: list[str] = []
    for segment in segments:
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif re.fullmatch(r'[^.\[\]"\s]+', segment):
            parts.append(f".{segment}" if parts else segment)
        else:
            parts.append(f"[{json.dumps(segment)}]")
    return "".join(parts) or "$"


def placeholders_in(template: Any) -> list[tuple[str, bool]]:
    """Every placeholder in a template's strings: (name, whether it is the string's whole value)."""
    found: list[tuple[str, bool]] = []
    stack = [template]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and "{{" in value:
            whole = PLACEHOLDER.fullmatch(value) is not None
            found.extend((match.group(1), whole) for match in PLACEHOLDER.finditer(value))
    return found
