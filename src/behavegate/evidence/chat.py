"""OpenAI-compatible Chat Completions: the request we send and what we read back.

Pure functions. The request is exactly skylos's (model, messages, stream false,
max_tokens, tools when any); the response is normalized from ``choices[0]``
only, and every shape problem leaves evidence *unobserved*, never invented.
"""

from __future__ import annotations

import json
import re
from typing import Any

from behavegate import finite_json
from behavegate.limits import (
    RESPONSE_MAX_DEPTH,
    RESPONSE_MAX_FINISH_REASON,
    RESPONSE_MAX_SOURCE_TEXT,
    RESPONSE_MAX_SOURCES,
    RESPONSE_MAX_TEXT,
    RESPONSE_MAX_TOOL_CALLS,
    RESPONSE_MAX_VALUES,
)
from behavegate.magnitude import quantity
from behavegate.model import AgentTarget, Observation, Scenario, ToolCall
from behavegate.text import has_surrogate

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class EndpointError(Exception):
    """This attempt produced no usable evidence; recorded on the observation."""


def offered_tools(agent: AgentTarget, scenario: Scenario) -> list[dict[str, Any]]:
    by_name = {tool.name: tool for tool in agent.tools}
    names = scenario.available_tools if scenario.available_tools is not None else tuple(by_name)
    return [
        {
            "type": "function",
            "function": {"name": name, "description": by_name[name].description, "parameters": dict(by_name[name].parameters)},
        }
        for name in names
    ]


def first_messages(scenario: Scenario) -> list[dict[str, Any]]:
    if scenario.messages:
        return [dict(m) for m in scenario.messages]
    messages: list[dict[str, Any]] = []
    if scenario.system_prompt:
        messages.append({"role": "system", "content": scenario.system_prompt})
    messages.append({"role": "user", "content": scenario.prompt})
    return messages


def build_request(
    agent: AgentTarget, scenario: Scenario, max_tokens: int, messages: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The request body: exactly skylos's for version 1; version 2 adds the
    contract's ``agent.parameters`` (which can never replace these keys),
    multi-turn ``messages`` and, with ``agent.stream``, ``stream: true``."""
    payload: dict[str, Any] = {**agent.parameters, **scenario.parameters}
    payload.update(model=agent.model, messages=messages or first_messages(scenario), stream=agent.stream, max_tokens=max_tokens)
    if agent.stream:
        # Usage is sent in a stream only when asked for (OpenAI's rule); the contract may say otherwise.
        payload.setdefault("stream_options", {"include_usage": True})
    tools = offered_tools(agent, scenario)
    if tools:
        payload["tools"] = tools
    return payload


def encode_message(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode("utf-8")


def encode_request(
    payload: dict[str, Any], history: list[bytes] | None = None, key_of_history: str = "messages"
) -> tuple[bytes, ...]:
    """``json.dumps(payload)`` as UTF-8, byte for byte, in pieces. With ``history``
    (messages already encoded) those are the messages (``key_of_history``; the Responses
    API's ``input``): a conversation is held once, as bytes, and its pieces are sent as
    they are, never joined into a copy."""
    if history is None:
        return (json.dumps(payload).encode("utf-8"),)
    pieces: list[bytes] = []
    for key, value in payload.items():
        pieces.append(b"{" if not pieces else b", ")
        pieces.append(json.dumps(key).encode("utf-8") + b": ")
        if key != key_of_history:
            pieces.append(json.dumps(value).encode("utf-8"))
            continue
        pieces.append(b"[")
        for index, message in enumerate(history):
            if index:
                pieces.append(b", ")
            pieces.append(message)
        pieces.append(b"]")
    pieces.append(b"}" if pieces else b"{}")
    return tuple(pieces)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise EndpointError("agent endpoint response contains duplicate keys")
        result[key] = value
    return result


def strict_json(text: str, max_values: int = RESPONSE_MAX_VALUES) -> Any:
    """JSON with unique keys, no NaN/Infinity, depth ≤ 64 and ≤ ``max_values`` values."""
    value = finite_json.loads(text, object_pairs_hook=_unique)
    check_shape(value, max_values)
    return value


def check_shape(value: Any, max_values: int = RESPONSE_MAX_VALUES) -> None:
    pending: list[tuple[Any, int]] = [(value, 0)]
    count = 0
    while pending:
        item, depth = pending.pop()
        if depth > RESPONSE_MAX_DEPTH:
            raise EndpointError(f"agent endpoint response nesting exceeds {RESPONSE_MAX_DEPTH}")
        count += 1
        if count > max_values:
            raise EndpointError(f"agent endpoint response exceeds {max_values} values")
        if isinstance(item, str):
            if has_surrogate(item):
                # Decodable JSON, but text no report can hold: this attempt is incomplete.
                raise EndpointError("agent endpoint response contains text that is not valid Unicode (an unpaired surrogate)")
        elif isinstance(item, dict):
            pending.extend((key, depth + 1) for key in item)
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)


def decode_body(body: bytes, scenario_id: str, missing_tool_calls: str = "unobserved") -> Observation:
    return normalize(parse_body(body), scenario_id, missing_tool_calls)


def parse_body(body: bytes) -> Any:
    try:
        return strict_json(body.decode("utf-8"))
    except (UnicodeError, ValueError, RecursionError):
        raise EndpointError("agent endpoint returned invalid JSON") from None


def normalize(raw: Any, scenario_id: str, missing_tool_calls: str = "unobserved") -> Observation:
    """``missing_tool_calls="none"`` (a version-2 contract's trust statement):
    an absent ``tool_calls`` key means the agent called no tool."""
    if not isinstance(raw, dict):
        raise EndpointError("agent endpoint response must be an object")
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices:
        raise EndpointError("agent endpoint response requires choices[0]")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise EndpointError("agent endpoint response requires choices[0].message")
    message = choice["message"]
    if missing_tool_calls == "none" and "tool_calls" not in message:
        message = {**message, "tool_calls": None}
    finish_reason = _finish_reason(choice.get("finish_reason"))
    response, response_shape_ok = _text(message.get("content"))
    calls, tools_shape_ok = _tool_calls(message)
    response_complete = tool_calls_complete = None
    if finish_reason is not None:
        response_complete = finish_reason == "stop" and response_shape_ok
        tool_calls_complete = finish_reason in {"stop", "tool_calls"} and tools_shape_ok
    return Observation(
        scenario_id=scenario_id,
        response=response,
        response_complete=response_complete,
        finish_reason=finish_reason,
        tool_calls=calls,
        tool_calls_complete=tool_calls_complete,
        refusal=_refusal(message),
        sources=_sources(message),
        total_tokens=_total_tokens(raw.get("usage")),
        input_tokens=_total_tokens(raw.get("usage"), "prompt_tokens"),
        output_tokens=_total_tokens(raw.get("usage"), "completion_tokens"),
        tool_calls_absent="tool_calls" not in message,
    )


def _total_tokens(usage: Any, key: str = "total_tokens") -> int | None:
    # Not a whole number, negative, or past any real run's (an agent's 10**400): no count, never zero.
    return quantity(usage.get(key)) if isinstance(usage, dict) else None


def assistant_turn(raw: Any) -> dict[str, Any]:
    """The assistant message to send back in the next turn, as the agent wrote it."""
    message = raw["choices"][0]["message"]
    turn: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        turn["tool_calls"] = message["tool_calls"]
    return turn


def _finish_reason(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and len(value.strip()) <= RESPONSE_MAX_FINISH_REASON:
        return value.strip()
    return None


def _text(value: Any) -> tuple[str | None, bool]:
    """(text, shape ok). Content parts are joined; unknown parts break the shape."""
    if value is None:
        return None, True
    if isinstance(value, str):
        return (value, True) if len(value) <= RESPONSE_MAX_TEXT else (None, False)
    if not isinstance(value, list):
        return None, False
    parts: list[str] = []
    ok = True
    for part in value:
        kind = part.get("type") if isinstance(part, dict) else "?"
        if (kind is None or kind in {"text", "output_text"}) and isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
        else:
            ok = False
    text = "".join(parts) if parts else None
    if text is not None and len(text) > RESPONSE_MAX_TEXT:
        return None, False
    return text, ok


def _tool_calls(message: dict[str, Any]) -> tuple[tuple[ToolCall, ...] | None, bool]:
    if "tool_calls" not in message:
        return None, False
    raw_calls = message["tool_calls"]
    if raw_calls is None:
        return (), True
    if not isinstance(raw_calls, list) or len(raw_calls) > RESPONSE_MAX_TOOL_CALLS:
        return None, False
    calls: list[ToolCall] = []
    for raw in raw_calls:
        function = raw.get("function") if isinstance(raw, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name.strip()):
            return None, False
        assert isinstance(function, dict)
        calls.append(ToolCall(name.strip(), _arguments(function.get("arguments"))))
    return tuple(calls), True


def _arguments(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return dict(value)
    if not isinstance(value, str):
        return None
    try:
        parsed = strict_json(value)
    except (EndpointError, ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _refusal(message: dict[str, Any]) -> bool | None:
    if "refusal" not in message:
        return None
    value = message["refusal"]
    if value is None:
        return False  # OpenAI sends "refusal": null when the model did not refuse
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return bool(value.strip())
    return None


def _sources(message: dict[str, Any]) -> tuple[str, ...] | None:
    if "sources" not in message:
        return None
    values = message["sources"]
    if not isinstance(values, list) or len(values) > RESPONSE_MAX_SOURCES:
        return None
    found: list[str] = []
    for value in values:
        source: str | None = None
        if isinstance(value, str):
            source = value.strip()
        elif isinstance(value, dict):
            candidate = value.get("id") or value.get("source")
            source = candidate.strip() if isinstance(candidate, str) else None
        if not source or len(source) > RESPONSE_MAX_SOURCE_TEXT:
            return None
        found.append(source)
    return tuple(found)
