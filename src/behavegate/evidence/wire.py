"""The three wire formats of a live endpoint: what the conversation loop sends and reads,
by format. Chat Completions is evidence/chat.py; the OpenAI Responses API
(``agent.api: responses``) is evidence/responses.py; a custom JSON agent (``agent.http``)
is evidence/http_agent.py. Each is read as the same evidence."""

from __future__ import annotations

from typing import Any

from behavegate.evidence import http_agent, responses
from behavegate.evidence.chat import assistant_turn, build_request, encode_message, encode_request, first_messages, normalize
from behavegate.model import AgentTarget, Observation, Scenario

_HISTORY_KEY = {"chat": "messages", "responses": "input"}  # the body's key that holds the conversation


def first_request(
    agent: AgentTarget, scenario: Scenario, max_tokens: int, mcp_url: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The first request body and the conversation it carries (the loop keeps it encoded);
    ``mcp_url``: the attempt's MCP URL, where the wire format has a place for it."""
    if agent.http is not None:
        return http_agent.build_request(agent, scenario, max_tokens, mcp_url), first_messages(scenario)
    if agent.api == "responses":
        body = responses.build_request(agent, scenario, max_tokens, mcp_url)
    else:
        body = build_request(agent, scenario, max_tokens)
    return body, body[_HISTORY_KEY[agent.api]]


def next_user_request(
    agent: AgentTarget, scenario: Scenario, user: str, body: dict[str, Any], max_tokens: int, mcp_url: str | None
) -> dict[str, Any]:
    """The request body for the next scripted user turn: the same body (the history is spliced in
    by :func:`encode`), except an ``agent.http`` template's ``{{prompt}}``, which is the new message."""
    if agent.http is None:
        return body
    return http_agent.build_request(agent, scenario, max_tokens, mcp_url, prompt=user)


def encode(agent: AgentTarget, body: dict[str, Any], history: list[bytes]) -> tuple[bytes, ...]:
    """The request body with the conversation so far (messages already encoded), in pieces."""
    if agent.http is not None:
        return http_agent.encode(body, history)
    return encode_request(body, history, _HISTORY_KEY[agent.api])


def tool_message(agent: AgentTarget, call_id: str, content: str) -> dict[str, Any]:
    """A scripted tool result, as the next request carries it."""
    if agent.api == "responses" and agent.http is None:
        return responses.tool_result(call_id, content)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def read_turn(
    agent: AgentTarget, raw: Any, scenario_id: str, turn: int
) -> tuple[Observation, tuple[bytes, ...], tuple[str | None, ...]]:
    """The observation, the agent's turn to send back (encoded, as the agent wrote it)
    and the id of each tool call, in order."""
    if agent.http is not None:
        observation, assistant, ids = http_agent.read(raw, agent, scenario_id, turn)
        return observation, (encode_message(assistant),), ids
    if agent.api == "responses":
        observation = normalize(responses.as_chat(raw), scenario_id)
        return observation, tuple(responses.assistant_items(raw)), responses.call_ids(raw)
    observation = normalize(raw, scenario_id, agent.missing_tool_calls)
    raw_calls = raw["choices"][0]["message"].get("tool_calls")
    raw_calls = raw_calls if isinstance(raw_calls, list) else []
    ids = tuple(str(c["id"]) if isinstance(c, dict) and c.get("id") else None for c in raw_calls)
    return observation, (encode_message(assistant_turn(raw)),), ids
