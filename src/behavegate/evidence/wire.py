"""The two wire formats of a live endpoint (``agent.api``): what the conversation loop
sends and reads, by format. Chat Completions is evidence/chat.py; the OpenAI Responses
API is evidence/responses.py, read as the same evidence."""

from __future__ import annotations

from typing import Any

from behavegate.evidence import responses
from behavegate.evidence.chat import assistant_turn, build_request, encode_message, normalize
from behavegate.model import AgentTarget, Observation, Scenario


def first_request(agent: AgentTarget, scenario: Scenario, max_tokens: int) -> tuple[dict[str, Any], str]:
    """The first request body and the key of its conversation (``messages`` or ``input``)."""
    if agent.api == "responses":
        return responses.build_request(agent, scenario, max_tokens), "input"
    return build_request(agent, scenario, max_tokens), "messages"


def tool_message(api: str, call_id: str, content: str) -> dict[str, Any]:
    """A scripted tool result, as the next request carries it."""
    if api == "responses":
        return responses.tool_result(call_id, content)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def read_turn(
    api: str, raw: Any, scenario_id: str, missing_tool_calls: str
) -> tuple[Observation, tuple[bytes, ...], tuple[str | None, ...]]:
    """The observation, the agent's turn to send back (encoded, as the agent wrote it)
    and the id of each tool call, in order."""
    if api == "responses":
        observation = normalize(responses.as_chat(raw), scenario_id)
        return observation, tuple(responses.assistant_items(raw)), responses.call_ids(raw)
    observation = normalize(raw, scenario_id, missing_tool_calls)
    raw_calls = raw["choices"][0]["message"].get("tool_calls")
    raw_calls = raw_calls if isinstance(raw_calls, list) else []
    ids = tuple(str(c["id"]) if isinstance(c, dict) and c.get("id") else None for c in raw_calls)
    return observation, (encode_message(assistant_turn(raw)),), ids
