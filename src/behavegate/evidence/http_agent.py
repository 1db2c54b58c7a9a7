"""A custom HTTP agent (``agent.http``, version 2): a third wire format, read as the same evidence.

Pure functions. The request is the contract's template with the scenario put in its
placeholders: ``{{prompt}}`` (the last user message), ``{{messages}}`` (the whole
conversation as Chat Completions messages, scripted tool results included), ``{{tools}}``
(the offered tools as function tools), ``{{model}}`` and ``{{max_tokens}}``. The answer is
read by the contract's paths and put into the shape of a Chat Completions answer (as the
Responses API's is), so one normalization gives one Observation for one behaviour.

Evidence rules unchanged: a path the answer does not have, or that holds a value of the
wrong kind, leaves its evidence unobserved with that reason, never a pass; an answer
without a completeness field (and no ``complete: true`` in the contract) cannot pass.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from behavegate.conversation import Conversation, ScriptedResult
from behavegate.evidence.chat import first_messages, normalize, offered_tools
from behavegate.frozen import Frozen, replace
from behavegate.http_mapping import PLACEHOLDER, FieldPath, HttpMapping, kind_of, lookup, select_items
from behavegate.model import JSON, AgentTarget, Observation, Scenario, ToolCall


class Unknown:
    """An executed call's outcome when the mapping has no error path: not observed."""


UNKNOWN = Unknown()


class Executed(Frozen):
    """A call the agent ran itself, as its answer reports it."""

    name: str
    arguments: Any
    call_id: str
    result: JSON
    error: str | Unknown | None


# Where the conversation goes in the encoded body: the history is kept as encoded messages
# (evidence/live.py) and spliced in here, never decoded to be encoded again.
_SLOT = f"\x00behavegate conversation {secrets.token_hex(8)}\x00"
_ENCODED_SLOT = json.dumps(_SLOT).encode("utf-8")
_RESPONSE = "agent.http.response"
_NO_COMPLETE = f"{_RESPONSE} maps no complete (map the answer's completeness field, or state complete: true)"


def prompt_of(messages: list[dict[str, Any]]) -> str:
    """The last user message's text: what ``{{prompt}}`` stands for."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def build_request(
    agent: AgentTarget, scenario: Scenario, max_tokens: int, mcp_url: str | None = None, prompt: str | None = None
) -> dict[str, Any]:
    """The body with every placeholder filled; ``{{messages}}`` holds a slot :func:`encode`
    fills with the conversation; ``{{mcp_url}}`` is the attempt's own MCP URL (agent.mcp);
    ``prompt``: the latest user message (a scripted user turn), else the scenario's.
    A scenario's ``parameters`` join the body's top level."""
    assert agent.http is not None
    values: dict[str, Any] = {
        "prompt": prompt if prompt is not None else prompt_of(first_messages(scenario)),
        "messages": _SLOT,
        "tools": offered_tools(agent, scenario),
        "model": agent.model,
        "max_tokens": max_tokens,
        "mcp_url": mcp_url,
    }
    body = _render(dict(agent.http.request), values)
    assert isinstance(body, dict)
    return {**body, **scenario.parameters}


def _render(value: Any, values: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {key: _render(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item, values) for item in value]
    if isinstance(value, str) and "{{" in value:
        whole = PLACEHOLDER.fullmatch(value)
        if whole is not None:
            return values[whole.group(1)]
        # Only text placeholders are spliced into a longer string (contract/v2_http.py checks).
        return PLACEHOLDER.sub(lambda match: str(values[match.group(1)] or ""), value)
    return value


def encode(body: dict[str, Any], history: list[bytes]) -> tuple[bytes, ...]:
    """``json.dumps`` of the body with the conversation in its slot, in pieces."""
    encoded = json.dumps(body).encode("utf-8")
    before, slot, after = encoded.partition(_ENCODED_SLOT)
    if not slot:
        return (encoded,)
    pieces = [before, b"["]
    for index, message in enumerate(history):
        pieces.extend((b", ", message) if index else (message,))
    return (*pieces, b"]", after)


def read(raw: Any, agent: AgentTarget, scenario_id: str, turn: int) -> tuple[Observation, dict[str, Any], tuple[str | None, ...]]:
    """The observation, the assistant message to send back (Chat Completions form, as
    ``{{messages}}`` carries it) and each tool call's id (made up when the answer has none)."""
    assert agent.http is not None
    mapping = agent.http
    message: dict[str, Any] = {"role": "assistant"}
    response_gap = _content(raw, mapping, message)
    tool_gap, calls = _tool_calls(raw, mapping, message, agent.missing_tool_calls, turn)
    for key, path in (("refusal", mapping.refusal), ("sources", mapping.sources)):
        found, value, _ = lookup(raw, path) if path is not None else (False, None, "")
        if found:
            message[key] = value
    executed_gap, executed = _executed_calls(raw, mapping, turn)
    finish, complete_gap = _finish_reason(raw, mapping.complete, bool(calls))
    chat: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    usage = {key: value for key, path in mapping.usage.items() if (value := _found(raw, path)) is not None}
    if usage:
        renamed = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"}
        chat["usage"] = {renamed.get(key, key): value for key, value in usage.items()}
    # The mapping's own reasons say why calls are not known; "left out message.tool_calls" is Chat Completions' case.
    observation = replace(normalize(chat, scenario_id, agent.missing_tool_calls), tool_calls_absent=False)
    if complete_gap is not None:
        response_gap = response_gap or f"final response completion evidence was not observed: {complete_gap}"
        tool_gap = tool_gap or f"tool-call completion evidence was not observed: {complete_gap}"
    if response_gap or tool_gap:
        observation = replace(observation, response_gap=response_gap, tool_gap=tool_gap)
    if observation.tool_calls and any("arguments" not in call["function"] for call in calls):
        # Arguments the mapping does not reach are not observed (never "not a JSON object"): requested calls.
        unread = tuple(
            replace(c, executed=False) if "arguments" not in raw_call["function"] else c
            for c, raw_call in zip(observation.tool_calls, calls, strict=False)
        )
        observation = replace(observation, tool_calls=unread)
    if mapping.executed_calls is not None:
        observation = _with_executed(observation, executed, executed_gap, mapping)
    assistant = {"role": "assistant", "content": message.get("content")}
    if calls:
        assistant["tool_calls"] = calls
    return observation, assistant, tuple(call["id"] for call in calls)


def _found(raw: Any, path: FieldPath) -> Any:
    found, value, _ = lookup(raw, path)
    return value if found else None


def _content(raw: Any, mapping: HttpMapping, message: dict[str, Any]) -> str | None:
    """Puts the answer's text into ``message``; else says why it was not observed."""
    if mapping.content is None:
        return f"final response text was not observed: {_RESPONSE} maps no content"
    found, value, why = lookup(raw, mapping.content)
    if not found:
        return f"final response text was not observed: {why} ({_RESPONSE}.content)"
    if value is not None and not isinstance(value, str):
        return f"final response text was not observed: {mapping.content.text} is {kind_of(value)}, not text"
    message["content"] = value
    return None


def _tool_calls(
    raw: Any, mapping: HttpMapping, message: dict[str, Any], missing: str, turn: int
) -> tuple[str | None, list[dict[str, Any]]]:
    """Puts the answer's tool calls into ``message`` (Chat Completions form); else says why
    they were not observed. ``missing: none`` (the contract's statement): no list, no call."""
    paths = mapping.tool_calls
    if paths is None:
        if missing == "none" or mapping.executed_calls is not None:  # it runs its tools: it asks for none
            message["tool_calls"] = None
            return None, []
        return f"tool calls were not observed: {_RESPONSE} maps no tool_calls", []
    state, value, why = select_items(raw, paths.path, paths.where)
    if state == "unreadable":
        return f"tool calls were not observed: {why}", []
    if state == "absent":
        if missing == "none":
            return None, []
        fix = "; if the agent leaves it out when it calls no tool, state agent.missing_tool_calls: none"
        return f"tool calls were not observed: {why} ({_RESPONSE}.tool_calls.path){fix}", []
    if value is None:
        message["tool_calls"] = None
        return None, []
    calls: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        where = f"{paths.path.text}[{index}]"
        found, name, why = lookup(item, paths.name, where)
        if not found or not isinstance(name, str):
            why = why or f"{where}: {paths.name.text} is {kind_of(name)}, not text"
            return f"tool calls were not observed: {why} ({_RESPONSE}.tool_calls.name)", []
        function: dict[str, Any] = {"name": name}
        if paths.arguments is not None:
            found, arguments, _ = lookup(item, paths.arguments, where)
            if found:  # absent arguments stay unobserved: the call's name is still evidence
                function["arguments"] = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call_id = _found(item, paths.id) if paths.id is not None else None
        call_id = call_id if isinstance(call_id, str) and call_id else f"call_{turn}_{index}"
        calls.append({"id": call_id, "type": "function", "function": function})
    message["tool_calls"] = calls
    return None, calls


def _executed_calls(raw: Any, mapping: HttpMapping, turn: int) -> tuple[str | None, list[Executed]]:
    """The calls the agent ran itself, with result and error; else why they were not observed.
    Unknown is never zero: a missing list is "not observed", never "no call"."""
    paths = mapping.executed_calls
    if paths is None:
        return None, []
    where = f"{_RESPONSE}.executed_calls"
    state, value, why = select_items(raw, paths.path, paths.where)
    if state != "found":
        return f"tool calls were not observed: {why} ({where}.path)", []
    if value is None:
        return None, []
    calls: list[Executed] = []
    for index, item in enumerate(value):
        at = f"{paths.path.text}[{index}]"
        found, name, why = lookup(item, paths.name, at)
        if not found or not isinstance(name, str) or not name.strip():
            why = why or f"{at}: {paths.name.text} is {kind_of(name)}, not a name"
            return f"tool calls were not observed: {why} ({where}.name)", []
        arguments = None
        if paths.arguments is not None:
            from behavegate.evidence.traces.messages import arguments_of  # agent.http with arguments only

            found, value_found, _ = lookup(item, paths.arguments, at)
            arguments = arguments_of(value_found) if found else None
        call_id = _found(item, paths.id) if paths.id is not None else None
        result = _found(item, paths.result) if paths.result is not None else None
        error: str | Unknown | None = UNKNOWN
        if paths.error is not None:
            found, failed, _ = lookup(item, paths.error, at)
            error = None if not found or failed in (None, False, "") else _error_text(failed)
        calls.append(
            Executed(name.strip(), arguments, call_id if isinstance(call_id, str) else f"run_{turn}_{index}", result, error)
        )
    return None, calls


def _error_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _with_executed(observation: Observation, executed: list[Executed], gap: str | None, mapping: HttpMapping) -> Observation:
    """The turn's evidence with the calls the agent ran itself after the ones it asks
    behavegate to answer: executed calls, their errors (when mapped) and results."""
    assert mapping.executed_calls is not None
    if gap is not None:
        return replace(observation, tool_calls=None, tool_errors=None, tool_gap=observation.tool_gap or gap)
    asked = observation.tool_calls
    if asked is None and mapping.tool_calls is not None:
        return observation  # the requested calls are not known: neither is the whole
    calls = (*(asked or ()), *(ToolCall(c.name, c.arguments, c.call_id, executed=True) for c in executed))
    errors: tuple[str | None, ...] | None = None
    if all(c.error is not UNKNOWN for c in executed) and not asked:
        errors = tuple(c.error if isinstance(c.error, str) else None for c in executed)
    offset = len(asked or ())
    results = tuple(
        ScriptedResult(
            offset + i, c.name, None if isinstance(c.error, str) else c.result, c.error if isinstance(c.error, str) else None
        )
        for i, c in enumerate(executed)
    )
    return replace(
        observation,
        tool_calls=calls,
        tool_calls_complete=observation.tool_calls_complete if mapping.tool_calls is not None else True,
        tool_errors=errors,
        steps=None,  # the agent's own model steps are not in its answer
        conversation=Conversation(1, 1, results) if results else None,
    )


def _finish_reason(raw: Any, complete: FieldPath | bool | None, called: bool) -> tuple[str | None, str | None]:
    """The finish reason the answer's completeness field stands for, or why it was not observed."""
    whole = "tool_calls" if called else "stop"
    if complete is True:
        return whole, None
    if not isinstance(complete, FieldPath):
        return None, _NO_COMPLETE
    found, value, why = lookup(raw, complete)
    if not found:
        return None, f"{why} ({_RESPONSE}.complete)"
    if isinstance(value, bool):
        return (whole if value else "incomplete"), None
    if isinstance(value, str) and value.strip():
        return value.strip(), None  # a finish reason: stop and tool_calls are whole, as in Chat Completions
    return None, f"{complete.text} is {kind_of(value)}, not a boolean or a finish reason"
