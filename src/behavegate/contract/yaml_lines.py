"""Strict YAML 1.1 reading with line numbers kept for every key and item.

PyYAML's resolvers give the YAML 1.1 typing skylos users rely on (``NO`` is
false, ``012`` is 10). We build Python values ourselves so that duplicate keys,
aliases and non-scalar keys are refused, and so that each mapping key and list
item remembers its line. Construction order follows PyYAML's own (mappings at
once, sequence items deferred round by round) so the *first* error reported
matches skylos.

libyaml does the parsing when present. An ordinary document is built straight
from libyaml's events (no node graph: a 4 MiB suite's graph alone is ~300 MB); anything
unusual (an alias, a duplicate key, an explicit tag, a value a constructor refuses, deep
nesting) is composed into nodes again, so the exact refusal skylos gives is the one
reported. On any parse error the pure-Python parser runs again, because its messages
(with the source snippet) are what skylos shows.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from behavegate.errors import Problem
from behavegate.limits import INPUT_MAX_DEPTH, INPUT_MAX_TEXT, INPUT_MAX_VALUES

MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
STR_TAG = "tag:yaml.org,2002:str"

_FAST_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlRefused(Exception):
    """The document is not acceptable; carries the one skylos-worded problem."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.text)
        self.problem = problem


class LineMap:
    """Lines (1-based) of mapping keys and list items, keyed by container identity."""

    def __init__(self) -> None:
        self.keys: dict[int, dict[Any, int]] = {}
        self.items: dict[int, list[int]] = {}
        self.starts: dict[int, int] = {}
        # True when the composed document is certainly within the value-count,
        # depth and string-length limits, so the exact shape walk can be skipped.
        self.within_limits = False

    def of_key(self, container: Any, key: Any) -> int | None:
        # Called for every key a reader checks (a streamed run: ~35 a golden-set row): no dict made a call.
        lines = self.keys.get(id(container))
        found = None if lines is None else lines.get(key)
        return found if found is not None else self.starts.get(id(container))

    def of_item(self, container: Any, index: int) -> int | None:
        lines = self.items.get(id(container))
        if lines is not None and 0 <= index < len(lines):
            return lines[index]
        return self.starts.get(id(container))

    def of(self, container: Any) -> int | None:
        return self.starts.get(id(container))


class _PurePythonLoader(yaml.SafeLoader):
    """Refuses aliases while composing, exactly where skylos does."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.events.AliasEvent):
            raise YamlRefused(Problem("Contract contains a YAML alias"))
        return super().compose_node(parent, index)


class _TooDeep(Exception):
    pass


def load_yaml(source: str, label: str = "Contract", max_values: int = INPUT_MAX_VALUES) -> tuple[Any, LineMap]:
    """Parse ``source``; return the value and its line map, or raise YamlRefused.

    The fast parser handles every ordinary document. Documents with a syntax
    error, or nested deeper than any valid contract, are parsed again by the
    pure-Python parser so the error is the one skylos reports (for very deep
    documents that is Python's own recursion limit).
    """
    loader = _FAST_LOADER(source)
    try:
        return _load_events(loader, max_values)
    except Exception:  # anything unusual (or a syntax error) is decided and worded by composing below
        pass
    finally:
        loader.dispose()
    try:
        return _load_with(_FAST_LOADER, source, label, check_aliases=True, max_values=max_values)
    except (yaml.YAMLError, _TooDeep, RecursionError):
        pass
    try:
        return _load_with(_PurePythonLoader, source, label, check_aliases=False, max_values=max_values)
    except (yaml.YAMLError, RecursionError) as exc:
        raise YamlRefused(_syntax_problem(exc)) from None


def _syntax_problem(exc: BaseException) -> Problem:
    """skylos's words for the JSON ``error`` (the parser's multi-line text); for a person,
    the line where the bad construct starts and the same facts on one line, as every
    other problem reads."""
    text = f"Invalid contract YAML: {exc}"
    first = exc.context_mark or exc.problem_mark if isinstance(exc, yaml.MarkedYAMLError) else None
    if not isinstance(exc, yaml.MarkedYAMLError) or first is None:
        return Problem(text)
    parts: list[str] = []
    for what, mark in ((exc.context, exc.context_mark), (exc.problem, exc.problem_mark)):
        if not what:
            continue
        if mark is None:
            parts.append(what)
        else:
            at = f"line {mark.line + 1}, " if mark.line != first.line else ""
            parts.append(f"{what} ({at}column {mark.column + 1})")
    detail = "; ".join(parts) or "not valid YAML"
    return Problem(text, line=first.line + 1, human=f"Invalid contract YAML: {detail}")


def _load_with(loader_class: type[Any], source: str, label: str, *, check_aliases: bool, max_values: int) -> tuple[Any, LineMap]:
    loader = loader_class(source)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, LineMap()
        within = False
        if check_aliases:
            has_alias, depth, values, longest = _inspect(node)
            if has_alias:
                raise YamlRefused(Problem("Contract contains a YAML alias"))
            if depth > INPUT_MAX_DEPTH:
                raise _TooDeep()
            within = values <= max_values and longest <= INPUT_MAX_TEXT
        value, lines = _Builder(loader).build(node)
        lines.within_limits = within
        return value, lines
    finally:
        loader.dispose()


def _inspect(root: Node) -> tuple[bool, int, int, int]:
    """(does the graph hold an alias, its nesting depth, an upper bound of the
    values the shape check counts, the longest scalar). An alias shows in a
    composed graph as the same node object reached twice."""
    seen: set[int] = set()
    deepest = values = longest = 0
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            return True, deepest, values, longest
        seen.add(id(node))
        values += 1
        if depth > deepest:
            deepest = depth
        if isinstance(node, MappingNode):
            for key_node, value_node in node.value:
                stack.append((key_node, depth + 1))
                stack.append((value_node, depth + 1))
        elif isinstance(node, SequenceNode):
            values += len(node.value)  # list indexes count as values too
            stack.extend((child, depth + 1) for child in node.value)
        elif len(node.value) > longest:
            longest = len(node.value)
    return False, deepest, values, longest


def _has_surrogate(text: str) -> bool:
    """A lone surrogate (``"\\uD800"`` in a double-quoted scalar) cannot be
    written as UTF-8 anywhere later: refuse it where its line is known."""
    return not text.isascii() and any("\ud800" <= char <= "\udfff" for char in text)


class _Builder:
    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.lines = LineMap()
        self.pending: deque[tuple[list[Any], SequenceNode, str]] = deque()

    def build(self, root: Node) -> tuple[Any, LineMap]:
        value = self.construct(root, "")
        while self.pending:
            target, node, path = self.pending.popleft()
            self.lines.items[id(target)] = [child.start_mark.line + 1 for child in node.value]
            target.extend(self.construct(child, f"{path}[{index}]") for index, child in enumerate(node.value))
        return value, self.lines

    def construct(self, node: Node, path: str) -> Any:
        if isinstance(node, MappingNode) and node.tag == MAP_TAG:
            return self.construct_mapping(node, path)
        if isinstance(node, SequenceNode) and node.tag == SEQ_TAG:
            items: list[Any] = []
            self.lines.starts[id(items)] = node.start_mark.line + 1
            self.pending.append((items, node, path))
            return items
        if isinstance(node, ScalarNode) and node.tag == STR_TAG:
            if _has_surrogate(node.value):
                raise YamlRefused(Problem(f"{path or 'document'} contains an unpaired surrogate escape", path, _line(node)))
            return node.value  # what SafeConstructor.construct_yaml_str returns, without its dispatch
        # Other scalars (int, float, timestamp ...), sets, omaps: PyYAML's own
        # constructors. A value they cannot convert (``!!int abc``, ``2001-02-30``,
        # ``0x_``, a 5,000-digit integer) is skylos's message, located here.
        # (A YAMLError goes on to load_yaml, which words it as skylos does.)
        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, ArithmeticError) as exc:
            raise YamlRefused(Problem(str(exc), path, _line(node))) from None
        except (LookupError, AttributeError, TypeError):
            # PyYAML's own constructors fail this way on "!!bool maybe", '!!int ""', "!!timestamp abc".
            tag = str(node.tag).rsplit(":", 1)[-1]
            where = path or "document"
            raise YamlRefused(Problem(f"{where} cannot be read as !!{tag}: {node.value!r}", path, _line(node))) from None

    def construct_mapping(self, node: MappingNode, path: str) -> dict[Any, Any]:
        mapping: dict[Any, Any] = {}
        key_lines: dict[Any, int] = {}
        self.lines.starts[id(mapping)] = node.start_mark.line + 1
        self.lines.keys[id(mapping)] = key_lines
        for key_node, value_node in node.value:
            key = self.construct(key_node, path)
            try:
                duplicate = key in mapping
            except TypeError:
                raise YamlRefused(Problem("Contract mapping keys must be scalar")) from None
            if duplicate:
                raise YamlRefused(
                    Problem(
                        f"Duplicate contract mapping key: {key!r}",
                        line=key_node.start_mark.line + 1,
                    )
                )
            key_lines[key] = key_node.start_mark.line + 1
            mapping[key] = self.construct(value_node, f"{path}.{key}" if path else str(key))
        return mapping


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


class _Unusual(Exception):
    """Not an ordinary document: compose it into nodes, which decides and words it."""


_NO_KEY: Any = object()


def _load_events(loader: Any, max_values: int) -> tuple[Any, LineMap]:
    """The document built from libyaml's events, with the line map and limits the
    composing path gives; raises _Unusual for anything it does not build itself."""
    get = loader.get_event
    if not isinstance(get(), StreamStartEvent):
        raise _Unusual
    event = get()
    if isinstance(event, StreamEndEvent):
        return None, LineMap()
    if not isinstance(event, DocumentStartEvent):
        raise _Unusual
    lines = LineMap()
    resolve, construct = loader.resolve, loader.construct_object
    # A plain scalar whose first character starts no implicit type (most text) is a
    # string: the resolver's own rule, without its call per scalar.
    implicit_starts = loader.yaml_implicit_resolvers
    plain_text_is_str = not loader.yaml_path_resolvers and None not in implicit_starts
    values = longest = 0
    resolved: dict[tuple[str, Any], str] = {}
    root: Any = _NO_KEY
    # Open containers: [container, its key (or item) lines, the key awaiting its value].
    stack: list[list[Any]] = []
    while True:
        event = get()
        kind = type(event)
        if kind is MappingEndEvent or kind is SequenceEndEvent:
            container = stack.pop()[0]
            if kind is SequenceEndEvent:
                values += len(container)  # list indexes count as values too
            continue
        if kind is DocumentEndEvent:
            break
        if len(stack) > INPUT_MAX_DEPTH:
            raise _Unusual
        values += 1
        line = event.start_mark.line + 1
        value: Any
        if kind is ScalarEvent:
            text = event.value
            if len(text) > longest:
                longest = len(text)
            tag = event.tag
            if tag is None and plain_text_is_str and event.implicit[0] and text and text[0] not in implicit_starts:
                tag = STR_TAG
            elif tag is None or tag == "!":
                implicit = event.implicit
                cached = plain_text_is_str and len(text) <= 64  # short scalars repeat (keys, words): resolved once each
                tag = resolved.get((text, implicit)) if cached else None
                if tag is None:
                    tag = resolve(ScalarNode, text, implicit)
                    if cached:
                        resolved[(text, implicit)] = tag
            if tag == STR_TAG:
                if not text.isascii() and _has_surrogate(text):
                    raise _Unusual
                value = text
            else:
                value = construct(ScalarNode(tag, text, event.start_mark, event.end_mark, event.style), deep=True)
                loader.constructed_objects.clear()
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            mapping = kind is MappingStartEvent
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(MappingNode if mapping else SequenceNode, None, event.implicit)
            if tag != (MAP_TAG if mapping else SEQ_TAG) or (stack and stack[-1][2] is _NO_KEY and isinstance(stack[-1][0], dict)):
                raise _Unusual  # a tagged collection, or a collection as a key
            value = {} if mapping else []
            lines.starts[id(value)] = line
        else:
            raise _Unusual  # an alias
        if not stack:
            root = value
        else:
            top = stack[-1]
            container = top[0]
            if type(container) is list:
                container.append(value)
                top[1].append(line)
            elif top[2] is _NO_KEY:
                if value in container:  # a duplicate key (an unhashable one raises TypeError)
                    raise _Unusual
                top[1][value] = line
                top[2] = value
            else:
                container[top[2]] = value
                top[2] = _NO_KEY
        if kind is MappingStartEvent:
            key_lines: dict[Any, int] = {}
            lines.keys[id(value)] = key_lines
            stack.append([value, key_lines, _NO_KEY])
        elif kind is SequenceStartEvent:
            item_lines: list[int] = []
            lines.items[id(value)] = item_lines
            stack.append([value, item_lines, _NO_KEY])
    if not isinstance(get(), StreamEndEvent):
        raise _Unusual  # more than one document
    lines.within_limits = values <= max_values and longest <= INPUT_MAX_TEXT
    return root, lines
