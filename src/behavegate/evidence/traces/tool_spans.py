"""What a tool span says it ran (name, call id, arguments, result, error) and what
an agent or workflow span says it answered, in every dialect ``messages`` reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from behavegate.evidence.traces.messages import (
    arguments_of,
    completion,
    first,
    mcp_tool_call,
    parse_json,
    read_messages,
    text_of,
)
from behavegate.evidence.traces.spans import Span
from behavegate.limits import TRACE_MAX_TEXT


class ToolReading(NamedTuple):
    name: str
    call_id: str | None
    arguments: Mapping[str, Any] | None
    result: str | None
    error: str | None


def read_tool(span: Span) -> ToolReading:
    a = span.attributes
    name = first(a, "gen_ai.tool.name", "tool.name", "traceloop.entity.name")
    if (not isinstance(name, str) or not name.strip()) and mcp_tool_call(span):
        # The MCP conventions name the span "{mcp.method.name} {target}" (the mcp SDK: "MCP send tools/call NAME").
        name = span.name.partition("tools/call")[2]
    if not isinstance(name, str) or not name.strip():
        name = span.name.removeprefix("execute_tool ").removesuffix(".tool").strip() or span.name
    name = name.strip()  # as the live adapter reads names; what is left must still be a tool name
    call_id = first(a, "gen_ai.tool.call.id", "tool.id", "tool_call.id")
    arguments: Mapping[str, Any] | None = None
    for key in ("gen_ai.tool.call.arguments", "gen_ai.tool.args", "input.value"):
        if key in a:
            arguments = arguments_of(a[key])
            break
    else:
        if "traceloop.entity.input" in a:
            arguments = _traceloop_arguments(a["traceloop.entity.input"])
    result = first(a, "gen_ai.tool.call.result", "gen_ai.tool.result", "output.value", "traceloop.entity.output")
    return ToolReading(
        name,
        call_id if isinstance(call_id, str) and call_id else None,
        arguments,
        text_of(result, TRACE_MAX_TEXT),
        error_of(span),
    )


def _traceloop_arguments(value: Any) -> Mapping[str, Any] | None:
    # json.dumps({"args": [...], "kwargs": {...}}): positional arguments have no names,
    # so a call that used them has arguments that were not observed as an object.
    parsed = parse_json(value)
    if not isinstance(parsed, dict):
        return None
    args, kwargs = parsed.get("args") or [], parsed.get("kwargs")
    return kwargs if isinstance(kwargs, dict) and not args else None


def error_of(span: Span) -> str | None:
    """Why a span failed (status ERROR or ``error.type``), or None."""
    kind = span.attributes.get("error.type")
    if not span.error and kind is None:
        return None
    if isinstance(kind, str) and kind:
        return kind
    if span.status_message:
        return span.status_message
    for event in span.events:
        if event.name == "exception" and isinstance(event.attributes.get("exception.type"), str):
            return str(event.attributes["exception.type"])
    return "error"


def read_output(span: Span) -> str | None:
    """An agent or workflow span's output text (its answer), or None."""
    a = span.attributes
    if "gen_ai.output.messages" in a:
        found = read_messages(parse_json(a["gen_ai.output.messages"]), output=True)
        if found.texts:
            return "".join(found.texts)
    for key in ("output.value", "traceloop.entity.output"):
        if key in a:
            return text_of(a[key])
    if isinstance(a.get("gen_ai.completion"), str):
        found = completion(a["gen_ai.completion"])
        return "".join(found.texts) if found.texts else None
    return None
