"""The OpenAI Responses API (``agent.api: responses``, version 2): a second wire format.

Pure functions. The request carries the scenario's messages as ``input`` items, the
offered tools as function tools and ``max_output_tokens``. The answer's ``output``
items are put into the shape of a Chat Completions answer (:func:`as_chat`), so both
wire formats go through one normalization and give one Observation for one behaviour:
``message`` items give the content (``output_text`` parts) and the refusal
(``refusal`` parts), ``function_call`` items the tool calls, and ``status`` the
finish reason (completed with calls ≈ tool_calls, completed ≈ stop, incomplete
max_output_tokens ≈ length, any other incomplete reason ≈ that reason).

An answer that cannot say what the agent did (not an object, no ``output`` list, no
``status``, status failed or cancelled, an ``error``) is an EndpointError: the attempt
is incomplete with the reason. A part or item of the wrong shape breaks only its own
evidence, as in a Chat Completions answer.
"""

from __future__ import annotations

import json
from typing import Any

from behavegate.evidence.chat import EndpointError, first_messages, offered_tools
from behavegate.limits import RESPONSE_MAX_FINISH_REASON, RESPONSE_MAX_TOOL_CALLS
from behavegate.model import AgentTarget, Scenario

# Items that say nothing about content, tool calls or refusal (the model's reasoning summary).
_INERT_ITEMS = frozenset({"reasoning"})
# What a broken field becomes in the Chat Completions shape: one normalization rejects it.
_BROKEN_TEXT = [{"type": "unreadable output part"}]
_BROKEN_CALLS: dict[str, Any] = {}


def input_items(scenario: Scenario) -> list[dict[str, Any]]:
    """The scenario's messages as ``input`` items. A scripted history's assistant tool
    calls and ``role: tool`` results become ``function_call`` / ``function_call_output``."""
    items: list[dict[str, Any]] = []
    for message in first_messages(scenario):
        role = message.get("role")
        if role == "tool":
            items.append(
                {"type": "function_call_output", "call_id": message.get("tool_call_id"), "output": message.get("content")}
            )
            continue
        calls = message.get("tool_calls") if role == "assistant" else None
        if message.get("content") is not None or not calls:
            items.append({"role": role, "content": message.get("content") or ""})
        for call in calls or ():
            function = call.get("function", {}) if isinstance(call, dict) else {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id") if isinstance(call, dict) else None,
                    "name": function.get("name"),
                    "arguments": function.get("arguments"),
                }
            )
    return items


def build_request(agent: AgentTarget, scenario: Scenario, max_tokens: int, mcp_url: str | None = None) -> dict[str, Any]:
    """The request body; the contract's ``agent.parameters`` can never replace these keys.
    With an MCP URL (agent.mcp) the tools are offered as one remote MCP server, the
    attempt's own, instead of as function tools: the agent runs them where behavegate sees them."""
    payload: dict[str, Any] = {**agent.parameters, **scenario.parameters}
    payload.update(model=agent.model, input=input_items(scenario), stream=False, max_output_tokens=max_tokens)
    if mcp_url is not None:
        payload["tools"] = [{"type": "mcp", "server_label": "behavegate", "server_url": mcp_url, "require_approval": "never"}]
        return payload
    tools = [{"type": "function", **tool["function"]} for tool in offered_tools(agent, scenario)]
    if tools:
        payload["tools"] = tools
    return payload


def tool_result(call_id: str, content: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": content}


def assistant_items(raw: Any) -> list[bytes]:
    """The answer's output items to echo in the next request's ``input`` (a stateless
    conversation: ``function_call_output`` answers a ``function_call`` sent with it)."""
    output = raw.get("output") if isinstance(raw, dict) else None
    items = output if isinstance(output, list) else []
    return [json.dumps(item).encode("utf-8") for item in items if isinstance(item, dict) and item.get("type") != "reasoning"]


def call_ids(raw: Any) -> tuple[str | None, ...]:
    """The ``call_id`` of each function call, in the order :func:`as_chat` lists them."""
    output = raw.get("output") if isinstance(raw, dict) else None
    calls = [i for i in output if isinstance(i, dict) and i.get("type") == "function_call"] if isinstance(output, list) else []
    return tuple(c["call_id"] if isinstance(c.get("call_id"), str) and c["call_id"] else None for c in calls)


def as_chat(raw: Any) -> dict[str, Any]:
    """The Responses answer in the shape of a Chat Completions answer (see the module doc)."""
    if not isinstance(raw, dict):
        raise EndpointError("agent endpoint response must be an object")
    status = raw.get("status")
    if not isinstance(status, str):
        raise EndpointError("agent endpoint response requires a status (Responses API)")
    if status not in {"completed", "incomplete"}:
        shown = status[:RESPONSE_MAX_FINISH_REASON] if status.isprintable() else "?"
        raise EndpointError(f"agent endpoint response status is {shown!r}, not completed (Responses API)")
    if raw.get("error") is not None:
        raise EndpointError("agent endpoint response reported an error")
    output = raw.get("output")
    if not isinstance(output, list):
        raise EndpointError("agent endpoint response requires an output list (Responses API)")
    texts: list[dict[str, Any]] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    text_ok = calls_ok = refusal_ok = True
    for item in output:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in _INERT_ITEMS:
            continue
        if kind == "message":
            assert isinstance(item, dict)
            parts = item.get("content")
            if not isinstance(parts, list):
                text_ok = refusal_ok = False
                continue
            for part in parts:
                part_kind = part.get("type") if isinstance(part, dict) else None
                if part_kind == "output_text" and isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append({"type": "output_text", "text": part["text"]})
                elif part_kind == "refusal" and isinstance(part, dict) and isinstance(part.get("refusal"), str):
                    refusals.append(part["refusal"])
                elif part_kind == "refusal":
                    refusal_ok = False
                else:
                    text_ok = False
        elif kind == "function_call":
            assert isinstance(item, dict)
            call = {"type": "function", "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            if isinstance(item.get("call_id"), str):
                call["id"] = item["call_id"]
            calls.append(call)
        else:
            # Not a function call we can read, and maybe a tool the agent used: tool evidence is unobserved.
            calls_ok = False
    message: dict[str, Any] = {"role": "assistant", "content": texts or None}
    if not text_ok:
        message["content"] = _BROKEN_TEXT
    message["tool_calls"] = (calls or None) if calls_ok and len(calls) <= RESPONSE_MAX_TOOL_CALLS else _BROKEN_CALLS
    message["refusal"] = ("".join(refusals) or None) if refusal_ok else 0
    chat: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(status, raw, calls)}]}
    usage = raw.get("usage")
    if isinstance(usage, dict):  # the Responses names for what Chat Completions calls prompt and completion tokens
        renamed = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"}
        chat["usage"] = {renamed.get(key, key): value for key, value in usage.items()}
    elif "usage" in raw:
        chat["usage"] = usage
    return chat


def _finish_reason(status: str, raw: dict[str, Any], calls: list[dict[str, Any]]) -> str | None:
    if status == "completed":
        return "tool_calls" if calls else "stop"
    details = raw.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if reason == "max_output_tokens":
        return "length"
    if isinstance(reason, str) and reason.strip() and reason.isprintable():
        return reason.strip()[:RESPONSE_MAX_FINISH_REASON]
    return "incomplete"
