"""Version-2 keys of deeper conversations: the ``tool_results`` rule list and
``response.uses_tool_result``. Problems go to the collector with YAML path and line."""

from __future__ import annotations

import json
import re
from typing import Any

from behavegate.contract import rules as f
from behavegate.conversation import ToolField, ToolResultRule

RULE_KEYS = ("name", "arguments", "content", "error")
DEFAULT_KEYS = ("content", "error")
FIELD_KEYS = ("tool", "field")
# a.b[0].c, or a.0.c: keys without dots or brackets, list indices in brackets or as a segment
_FIELD_PATH = re.compile(r"[^.\[\]]+(\[\d+\])*(\.[^.\[\]]+(\[\d+\])*)*")
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field_steps(path: str) -> list[str | int]:
    """``items[0].status`` -> ["items", 0, "status"] (a bracketed index is an int; a plain
    segment stays text and indexes a list when it is all digits)."""
    return [key if key else int(index) for key, index in _SEGMENT.findall(path)]


def _unknown(c: f.Collector, raw: dict[str, Any], allowed: tuple[str, ...], path: str, lines: Any) -> None:
    for key in raw:
        if key not in allowed:
            c.problems.append(f.unknown_key(f"{path}.{key}", key, allowed, lines.of_key(raw, key)))


def _json_value(value: Any, path: str, line: int | None) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise f.Bad(f"{path} must be a JSON value", path, line) from None
    return value


def _result(c: f.Collector, raw: dict[str, Any], path: str, line: int | None, lines: Any) -> tuple[Any, str | None] | None:
    """(content, error) of a rule or default: exactly one of the two."""
    has_content, has_error = "content" in raw, "error" in raw
    if has_content and has_error:
        c.add(f"{path} takes content or error, not both", path, lines.of_key(raw, "error"))
        return None
    if not (has_content or has_error):
        c.add(f"{path} needs content or error", path, line)
        return None
    if has_error:
        error = c.take(f.text, raw["error"], f"{path}.error", lines.of_key(raw, "error"))
        return None if error is None else (None, error)
    content = c.take(_json_value, raw["content"], f"{path}.content", lines.of_key(raw, "content"))
    return None if content is None and raw["content"] is not None else (content, None)


def tool_rules(c: f.Collector, items: list[Any], path: str, lines: Any) -> tuple[ToolResultRule, ...] | None:
    """``tool_results`` as a rule list; None when any rule is invalid."""
    mark = c.mark()
    if not items:
        c.add(f"{path} must contain at least one rule", path, lines.of(items))
        return None
    found: list[ToolResultRule] = []
    seen_bare: dict[str, int] = {}  # tool name -> index of its rule without arguments
    for index, item in enumerate(items):
        item_path, line = f"{path}[{index}]", lines.of_item(items, index)
        raw = c.take(f.mapping, item, item_path, line, required=True)
        if raw is None:
            continue
        if "default" in raw:
            extra = [key for key in raw if key != "default"]
            if extra:
                c.add(f"{item_path} takes default alone, not with {extra}", item_path, lines.of_key(raw, extra[0]))
                continue
            if index != len(items) - 1:
                c.add(f"{item_path}.default must be the last rule", f"{item_path}.default", lines.of_key(raw, "default"))
                continue
            block = c.take(f.mapping, raw["default"], f"{item_path}.default", lines.of_key(raw, "default"), required=True)
            if block is None:
                continue
            _unknown(c, block, DEFAULT_KEYS, f"{item_path}.default", lines)
            result = _result(c, block, f"{item_path}.default", lines.of_key(raw, "default"), lines)
            if result is not None:
                found.append(ToolResultRule(None, None, result[0], result[1]))
            continue
        item_mark = c.mark()
        _unknown(c, raw, RULE_KEYS, item_path, lines)
        if "name" not in raw:
            c.add(f"{item_path}.name is required", f"{item_path}.name", line)
            continue
        name = c.take(f.tool_name, raw["name"], f"{item_path}.name", lines.of_key(raw, "name"))
        arguments = None
        if "arguments" in raw:
            arguments = c.take(f.json_mapping, raw["arguments"], f"{item_path}.arguments", lines.of_key(raw, "arguments"))
        result = _result(c, raw, item_path, line, lines)
        if name is None or result is None or not c.clean_since(item_mark):
            continue
        if name in seen_bare:
            earlier = seen_bare[name]
            c.add(
                f"{item_path} can never match: {path}[{earlier}] answers every call of {name!r} first",
                item_path,
                line,
            )
            continue
        if arguments is None:
            seen_bare[name] = index
        found.append(ToolResultRule(name, arguments, result[0], result[1]))
    return tuple(found) if c.clean_since(mark) else None


def tool_fields(
    c: f.Collector, raw: dict[str, Any], path: str, lines: Any, parsed: list[tuple[int, ToolField, int | None]] | None = None
) -> tuple[ToolField, ...] | None:
    """``response.uses_tool_result``: a list of ``{tool, field}``; None when any item is invalid.
    ``parsed`` receives (index, item, line) of every item that is valid, whatever the others."""
    items = c.take(f.listing, raw.get("uses_tool_result"), path, lines.of_key(raw, "uses_tool_result"), required=True)
    if items is None:
        return None
    if not items:
        c.add(f"{path} must contain at least one item", path, lines.of_key(raw, "uses_tool_result"))
        return None
    mark = c.mark()
    found: list[ToolField] = []
    for index, item in enumerate(items):
        item_path, line = f"{path}[{index}]", lines.of_item(items, index)
        spec = c.take(f.mapping, item, item_path, line, required=True)
        if spec is None:
            continue
        _unknown(c, spec, FIELD_KEYS, item_path, lines)
        for key in FIELD_KEYS:
            if key not in spec:
                c.add(f"{item_path}.{key} is required", f"{item_path}.{key}", line)
        tool = c.take(f.tool_name, spec["tool"], f"{item_path}.tool", lines.of_key(spec, "tool")) if "tool" in spec else None
        field = c.take(_field_path, spec["field"], f"{item_path}.field", lines.of_key(spec, "field")) if "field" in spec else None
        if tool is not None and field is not None:
            found.append(ToolField(tool, field))
            if parsed is not None:
                parsed.append((index, found[-1], line))
    return tuple(found) if c.clean_since(mark) else None


def _field_path(value: Any, path: str, line: int | None = None) -> str:
    text = f.text(value, path, line)
    if not _FIELD_PATH.fullmatch(text):
        raise f.Bad(f"{path} must be a dotted path such as items[0].status, got {text!r}", path, line)
    return text


def grounding_problems(
    items: list[tuple[int, ToolField, int | None]], extras: dict[str, Any]
) -> list[tuple[int, str, int | None]]:
    """``uses_tool_result`` items (index, item, line) no scripted result of the scenario
    (``extras``: its version-2 fields) could ever answer: (item index, problem, line)."""
    problems = []
    rules, results = extras.get("tool_rules"), extras.get("tool_results") or {}
    for index, spec, line in items:
        answered = any(rule.name in (None, spec.tool) for rule in rules) if rules is not None else spec.tool in results
        if not answered:
            problems.append((index, f"no tool_results entry answers {spec.tool!r}, so its result can never be used", line))
    return problems


def unoffered_results(
    raw: Any, path: str, lines: Any, declared: set[str] | None, available: tuple[str, ...] | None
) -> list[tuple[str, str, int | None]]:
    """(problem, path, line) of each ``tool_results`` entry (rule list or mapping) naming a tool
    the agent does not declare (when it declares tools) or the scenario does not offer: its
    result could only ever answer a call the scenario should not see. Names that are not tool
    names are left to their own check."""
    entries: list[tuple[str, str, int | None]] = []
    if isinstance(raw, list):
        for index, item in enumerate(raw):
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                entries.append((item["name"], f"{path}[{index}].name", lines.of_key(item, "name")))
    elif isinstance(raw, dict):
        entries = [(name, f"{path}.{name}", lines.of_key(raw, name)) for name in raw if isinstance(name, str)]
    problems = []
    for name, where, line in entries:
        try:
            f.tool_name(name, where)
        except f.Bad:
            continue
        if declared is not None and name not in declared:
            problems.append((f"{where} must name a tool declared in agent.tools, got {name!r}", where, line))
        elif available is not None and name not in available:
            problems.append(
                (
                    f"{where} must name a tool available to the scenario (available_tools: {list(available)}), got {name!r}",
                    where,
                    line,
                )
            )
    return problems
