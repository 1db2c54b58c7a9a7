"""Version-2 keys of deeper conversations: the ``tool_results`` rule list and
``response.uses_tool_result``. Problems go to the collector with YAML path and line."""

from __future__ import annotations

import json
import re
from typing import Any

from behavegate.contract import rules as f
from behavegate.contract.tool_templates import field_steps as field_steps  # re-exported: the judge reads paths
from behavegate.contract.tool_templates import parsed, placeholders
from behavegate.conversation import Reply, ToolField, ToolResultRule

RULE_KEYS = ("name", "arguments", "content", "error", "results", "set")
DEFAULT_KEYS = ("content", "error", "results", "set")
REPLY_KEYS = ("content", "error")
FIELD_KEYS = ("tool", "field")
# a.b[0].c, or a.0.c: keys without dots or brackets, list indices in brackets or as a segment
_FIELD_PATH = re.compile(r"[^.\[\]]+(\[\d+\])*(\.[^.\[\]]+(\[\d+\])*)*")


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


def _result(
    c: f.Collector, raw: dict[str, Any], path: str, line: int | None, lines: Any, optional: bool = False
) -> tuple[Any, str | None] | None:
    """(content, error) of a rule or default: exactly one of the two (``optional``: or neither,
    for a rule whose ``results`` say what it answers; then ``(None, None)``)."""
    has_content, has_error = "content" in raw, "error" in raw
    if has_content and has_error:
        c.add(f"{path} takes content or error, not both", path, lines.of_key(raw, "error"))
        return None
    if not (has_content or has_error):
        if optional:
            return (None, None)
        c.add(f"{path} needs content or error", path, line)
        return None
    if has_error:
        error = c.take(f.text, raw["error"], f"{path}.error", lines.of_key(raw, "error"))
        return None if error is None else (None, error)
    content = c.take(_json_value, raw["content"], f"{path}.content", lines.of_key(raw, "content"))
    return None if content is None and raw["content"] is not None else (content, None)


def _placeholders_known(c: f.Collector, value: Any, path: str, line: int | None, state: Any) -> None:
    """Every ``{{...}}`` in ``value`` is ``arguments[.path]`` or ``state.<declared key>[.path]``."""
    for inner in placeholders(value):
        form = parsed(inner)
        shown = "{{" + inner + "}}"
        if form is None:
            c.add(
                f"{path}: {shown} is not a placeholder of a tool result: use {{{{arguments.NAME}}}} or {{{{state.KEY}}}}",
                path,
                line,
            )
        elif form[0] == "state" and (not form[1] or form[1][0] not in (state or {})):
            declared = sorted(state or {})
            c.add(f"{path}: {shown} names no key of the scenario's state (declared: {declared})", path, line)


def _replies(c: f.Collector, raw: dict[str, Any], path: str, lines: Any, state: Any) -> tuple[Reply, ...] | None:
    """``results``: the replies to a rule's first, second, ... call."""
    items = c.take(f.listing, raw["results"], f"{path}.results", lines.of_key(raw, "results"))
    if items is None:
        return None
    if not items:
        c.add(f"{path}.results must contain at least one result", f"{path}.results", lines.of_key(raw, "results"))
        return None
    mark = c.mark()
    found: list[Reply] = []
    for index, item in enumerate(items):
        item_path, line = f"{path}.results[{index}]", lines.of_item(items, index)
        block = c.take(f.mapping, item, item_path, line, required=True)
        if block is None:
            continue
        _unknown(c, block, REPLY_KEYS, item_path, lines)
        result = _result(c, block, item_path, line, lines)
        if result is not None:
            _placeholders_known(c, block.get("content", block.get("error")), item_path, line, state)
            found.append(Reply(result[0], result[1]))
    return tuple(found) if c.clean_since(mark) else None


def _behaviour(
    c: f.Collector, raw: dict[str, Any], path: str, line: int | None, lines: Any, state: Any
) -> tuple[Any, str | None, tuple[Reply, ...], bool, dict[str, Any] | None] | None:
    """A rule's or default's answer: (content, error, results, then, set); None when invalid."""
    mark = c.mark()
    replies = _replies(c, raw, path, lines, state) if "results" in raw else ()
    result = _result(c, raw, path, line, lines, optional="results" in raw)
    if result is not None:
        _placeholders_known(c, [result[0], result[1]], path, line, state)
    written = None
    if "set" in raw:
        written = c.take(f.json_mapping, raw["set"], f"{path}.set", lines.of_key(raw, "set"))
        for key, value in (written or {}).items():
            at = lines.of_key(raw["set"], key)
            if key not in (state or {}):
                c.add(f"{path}.set.{key} must name a key declared in the scenario's state", f"{path}.set.{key}", at)
            _placeholders_known(c, value, f"{path}.set.{key}", at, state)
    if result is None or replies is None or not c.clean_since(mark):
        return None
    then = "content" in raw or "error" in raw
    return result[0], result[1], replies, then, written


def tool_rules(
    c: f.Collector, items: list[Any], path: str, lines: Any, state: dict[str, Any] | None = None
) -> tuple[ToolResultRule, ...] | None:
    """``tool_results`` as a rule list; None when any rule is invalid. ``state``: the scenario's
    declared store (the keys placeholders and ``set`` may name)."""
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
            answer = _behaviour(c, block, f"{item_path}.default", lines.of_key(raw, "default"), lines, state)
            if answer is not None:
                content, error, replies, then, written = answer
                found.append(ToolResultRule(None, None, content, error, replies, then, written))
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
        answer = _behaviour(c, raw, item_path, line, lines, state)
        if name is None or answer is None or not c.clean_since(item_mark):
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
        content, error, replies, then, written = answer
        found.append(ToolResultRule(name, arguments, content, error, replies, then, written))
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


def scenario_state(c: f.Collector, raw: dict[str, Any], path: str, lines: Any) -> dict[str, Any] | None:
    """``state``: the key-value store the scenario's tool_results rules read and write."""
    state = c.take(f.json_mapping, raw["state"], f"{path}.state", lines.of_key(raw, "state"))
    if not isinstance(raw.get("tool_results"), list):
        message = f"{path}.state is read and written by tool_results rules: give tool_results as a rule list"
        c.add(message, f"{path}.state", lines.of_key(raw, "state"))
    return state
