"""``agent.http`` (version 2): a custom JSON agent's request template and the paths of its
answer's evidence (http_mapping.py holds the syntax). Every problem goes to the collector
with its YAML path and line, so a wrong mapping is named before anything is sent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from behavegate.contract import rules as f
from behavegate.http_mapping import (
    INLINE_PLACEHOLDERS,
    PLACEHOLDER,
    PLACEHOLDERS,
    USAGE_KEYS,
    CallsPaths,
    ExecutedPaths,
    FieldPath,
    HttpMapping,
    parse_list_path,
    parse_path,
)

HTTP_KEYS = ("request", "response")
RESPONSE_KEYS = ("content", "tool_calls", "executed_calls", "refusal", "sources", "complete", "usage")
CALLS_KEYS = ("path", "name", "arguments", "id", "where")
EXECUTED_KEYS = (*CALLS_KEYS, "result", "error")
LineOf = Callable[[Any, Any], "int | None"]
T = TypeVar("T")
_WHERE = "agent.http"
_LISTED = ", ".join(f"{{{{{name}}}}}" for name in PLACEHOLDERS)


def http_mapping(c: f.Collector, agent: dict[str, Any], line_of: LineOf) -> HttpMapping | None:
    """``agent.http`` of the agent block ``agent``, or None when it has a problem."""
    block = c.take(f.mapping, agent["http"], _WHERE, line_of(agent, "http"), required=True)
    if block is None:
        return None
    mark = c.mark()
    _unknown(c, block, HTTP_KEYS, _WHERE, line_of)
    _conflicts(c, agent, line_of)
    for key in (key for key in HTTP_KEYS if key not in block):
        c.add(f"{_WHERE}.{key} is required", f"{_WHERE}.{key}", line_of(agent, "http"))
    request = (
        c.take(f.json_mapping, block["request"], f"{_WHERE}.request", line_of(block, "request")) if "request" in block else None
    )
    if request is not None:
        _placeholders(c, block["request"], agent, line_of(block, "request"), line_of)
    response = c.take(f.mapping, block.get("response"), f"{_WHERE}.response", line_of(block, "response"), required=True)
    mapping = _response(c, response, line_of) if "response" in block and response is not None else None
    if not c.clean_since(mark) or request is None or mapping is None:
        return None
    return HttpMapping(request=request, **mapping)


def unplaced(
    mapping: HttpMapping, scenario: dict[str, Any], path: str, line_of: LineOf, serve_mcp: bool = False
) -> Iterator[tuple[str, str, int | None]]:
    """A scenario the template cannot carry whole: without ``{{messages}}`` only the last
    user message is sent, so a history, a system prompt or scripted tool results would be lost
    (tool results served over MCP, agent.mcp, are not carried in the request)."""
    if mapping.places("messages"):
        return
    lost = (
        ("tool_results", "scripts tool results"),
        ("system_prompt", "has a system prompt"),
        ("messages", "has more than one message"),
    )
    for key, what in lost:
        if key == "tool_results" and serve_mcp:
            continue
        if key in scenario and (key != "messages" or len(scenario[key] or ()) > 1):
            text = f"{path}.{key}: the scenario {what}, but agent.http.request places only {{{{prompt}}}}: place {{{{messages}}}}"
            yield text, f"{path}.{key}", line_of(scenario, key)


def _unknown(c: f.Collector, block: dict[str, Any], allowed: tuple[str, ...], where: str, line_of: LineOf) -> None:
    for key in block:
        if key not in allowed:
            c.problems.append(f.unknown_key(f"{where}.{key}", key, allowed, line_of(block, key)))


def _conflicts(c: f.Collector, agent: dict[str, Any], line_of: LineOf) -> None:
    """Keys of the OpenAI wire formats that a custom agent's mapping replaces."""
    replaced = {
        "api": "agent.api names an OpenAI wire format; agent.http maps the agent's own: leave agent.api out",
        "parameters": "agent.parameters: with agent.http the request body is agent.http.request: put the keys there",
    }
    for key, text in replaced.items():
        if key in agent:
            c.add(text, f"agent.{key}", line_of(agent, key))
    if agent.get("stream") is True:
        c.add(
            "agent.stream: an agent.http answer is read as one JSON document, unstreamed",
            "agent.stream",
            line_of(agent, "stream"),
        )


def _strings(value: Any, where: str, line: int | None, line_of: LineOf) -> Iterator[tuple[str, str, int | None]]:
    """Every string in the template, with its YAML path and line."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}", line_of(value, key) or line, line_of)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]", line, line_of)
    elif isinstance(value, str):
        yield value, where, line


def _placeholders(c: f.Collector, template: Any, agent: dict[str, Any], line: int | None, line_of: LineOf) -> None:
    placed: list[str] = []
    for text, where, at in _strings(template, f"{_WHERE}.request", line, line_of):
        whole = PLACEHOLDER.fullmatch(text) is not None
        for match in PLACEHOLDER.finditer(text):
            name = match.group(1)
            if name not in PLACEHOLDERS:
                c.add(f"{where}: unknown placeholder {match.group(0)}; the placeholders are {_LISTED}", where, at)
            elif not whole and name not in INLINE_PLACEHOLDERS:
                c.add(f"{where}: {{{{{name}}}}} must be the whole value, not part of a string", where, at)
            else:
                placed.append(name)
    if placed.count("messages") > 1:
        c.add(f"{_WHERE}.request places {{{{messages}}}} more than once", f"{_WHERE}.request", line)
    if "prompt" not in placed and "messages" not in placed:
        text = f"{_WHERE}.request must place {{{{prompt}}}} or {{{{messages}}}}: else the agent never sees the scenario"
        c.add(text, f"{_WHERE}.request", line)
    if "mcp_url" in placed and not (isinstance(agent.get("mcp"), dict) and agent["mcp"].get("serve") is True):
        c.add(f"{_WHERE}.request places {{{{mcp_url}}}}, but agent.mcp.serve is not true", f"{_WHERE}.request", line)
    if "model" in placed and not agent.get("model"):
        c.add(f"{_WHERE}.request places {{{{model}}}}, but agent.model is not set", f"{_WHERE}.request", line)


def _parsed(parse: Callable[[str], T], examples: str) -> Callable[[Any, str, int | None], T]:
    """A contract value read by ``parse`` (a path, a list path), its error with examples."""

    def read(value: Any, where: str, line: int | None = None) -> T:
        text = f.text(value, where, line)
        try:
            return parse(text)
        except ValueError as problem:
            raise f.Bad(f"{where} is not a path ({problem}), e.g. {examples}", where, line) from None

    return read


_path = _parsed(parse_path, "answer, data.reply, items[0].text")
_list_path = _parsed(parse_list_path, "steps, data.calls, messages[*].parts")


def _where(value: Any, where: str, line: int | None = None) -> tuple[tuple[FieldPath, Any], ...]:
    """``where: {type: function_call}``: the items whose value at each path equals the one given."""
    block = f.mapping(value, where, line)
    if not block:
        raise f.Bad(f"{where} names at least one path and its value", where, line)
    selected = []
    for key, wanted in block.items():
        if wanted is not None and not isinstance(wanted, str | int | float | bool):
            raise f.Bad(f"{where}.{key} must be text, a number, a boolean or null", f"{where}.{key}", line)
        selected.append((_path(key, f"{where}.{key}", line), wanted))
    return tuple(selected)


def _response(c: f.Collector, block: dict[str, Any], line_of: LineOf) -> dict[str, Any] | None:
    where = f"{_WHERE}.response"
    _unknown(c, block, RESPONSE_KEYS, where, line_of)

    def take(key: str, check: Any = _path, container: dict[str, Any] = block, at: str = where) -> Any:
        return c.take(check, container[key], f"{at}.{key}", line_of(container, key)) if key in container else None

    found: dict[str, Any] = {key: take(key) for key in ("content", "refusal", "sources")}
    for name, keys, kind in (("tool_calls", CALLS_KEYS, CallsPaths), ("executed_calls", EXECUTED_KEYS, ExecutedPaths)):
        calls = take(name, f.mapping)
        if calls is None:
            continue
        calls_where = f"{where}.{name}"
        _unknown(c, calls, keys, calls_where, line_of)
        for key in (key for key in ("path", "name") if key not in calls):
            c.add(f"{calls_where}.{key} is required", f"{calls_where}.{key}", line_of(block, name))
        paths = {key: take(key, container=calls, at=calls_where) for key in keys if key not in ("path", "where")}
        paths["path"] = take("path", _list_path, calls, calls_where)
        paths["where"] = take("where", _where, calls, calls_where) or ()
        found[name] = kind(**paths) if paths["path"] and paths["name"] else None
    if block.get("complete") is True:
        found["complete"] = True  # the contract's statement: every answer the agent sends is whole
    elif block.get("complete") is False:
        text = f"{where}.complete: false would leave every answer incomplete; map a path, or leave it out"
        c.add(text, f"{where}.complete", line_of(block, "complete"))
    else:
        found["complete"] = take("complete")
    usage = take("usage", f.mapping)
    if usage is not None:
        _unknown(c, usage, USAGE_KEYS, f"{where}.usage", line_of)
        found["usage"] = {key: path for key in USAGE_KEYS if (path := take(key, container=usage, at=f"{where}.usage"))}
    if not any(key in block for key in ("content", "tool_calls", "executed_calls")):
        text = f"{where} must map content, tool_calls or executed_calls: else nothing the agent did is observed"
        c.add(text, where, line_of(block, "content"))
    return found
