"""Evidence gates: why a kind of evidence cannot be judged (so its assertions
are incomplete, never pass). One place, used by evaluation and by every
assertion that needs the whole observation.

Version-1 reasons are skylos's words, byte for byte. Version 2 adds the cause
and the fix ("...; state agent.missing_tool_calls: none").
"""

from __future__ import annotations

from behavegate.model import Observation

MISSING = "scenario observation is missing"
TOKEN_CAP = "the response hit the token cap; raise --max-tokens"
ASKED_FOR_NONE = "calls not known: the answer ended asking for tools (finish_reason 'tool_calls') but listed no call"


def observation_gap(observation: Observation | None) -> str | None:
    if observation is None:
        return MISSING
    if observation.error:
        return f"scenario observation failed: {observation.error}"
    return None


def response_gap(observation: Observation | None, version: int = 1) -> str | None:
    """Why final-response evidence (text, refusal, sources) cannot be judged."""
    gap = observation_gap(observation)
    if gap is not None or observation is None:
        return gap
    if observation.response_gap:  # the evidence source said why (trace evidence)
        return observation.response_gap
    loop = possible_loop(observation)
    if loop is not None and (observation.finish_reason != "stop" or observation.response_complete is not True):
        return loop  # what would have been "no final answer", named for what it probably is
    reason = observation.finish_reason
    if reason is not None and reason != "stop":
        fix = None if observation.trace_id else _response_fix(reason)  # the fixes name live-run flags
        return _with_fix(f"final response is incomplete (finish_reason={reason!r})", fix, version)
    if observation.response_complete is False:
        return f"final response is incomplete (finish_reason={reason or 'unknown'!r})"
    if observation.response_complete is None:
        return "final response completion evidence was not observed"
    return None


def tool_gap(observation: Observation | None, version: int = 1) -> str | None:
    """Why tool-call evidence cannot be judged."""
    gap = observation_gap(observation)
    if gap is not None or observation is None:
        return gap
    if observation.tool_gap:
        return observation.tool_gap
    reason = observation.finish_reason
    if version >= 2 and reason == "tool_calls" and observation.tool_calls == ():
        return ASKED_FOR_NONE  # unknown is never zero (version 1 keeps skylos's reading: no call)
    if reason is not None and reason not in {"stop", "tool_calls"}:
        fix = TOKEN_CAP if reason == "length" and not observation.trace_id else None
        return _with_fix(f"tool-call evidence is incomplete (finish_reason={reason!r})", fix, version)
    if observation.tool_calls_complete is False:
        return _with_fix(
            f"tool-call evidence is incomplete (finish_reason={reason or 'unknown'!r})", _tools_fix(observation), version
        )
    if observation.tool_calls_complete is None:
        return "tool-call completion evidence was not observed"
    return None


def possible_loop(observation: Observation | None) -> str | None:
    """Version 2: why an attempt that ran out of ``max_turns`` while still calling tools
    may be a loop, with the calls it repeated (None: it did not)."""
    conversation = observation.conversation if observation is not None else None
    if conversation is None or not conversation.possible_loop:
        return None
    from behavegate.evidence.scripted import describe_repeats, repeated_calls

    repeats = repeated_calls(observation.tool_calls or ()) if observation is not None else []
    said = f"; repeated calls: {describe_repeats(repeats)}" if repeats else "; no call was repeated"
    return (
        f"possible loop: the agent was still calling tools when max_turns ({conversation.max_turns}) ran out, "
        f"with no final answer{said}: raise max_turns if the task needs more turns, or fix the agent"
    )


def _response_fix(reason: str) -> str | None:
    if reason == "tool_calls":
        return (
            "the agent asked for tool results and gave no final answer; script them with the scenario's "
            "tool_results and allow the requests with max_turns (calls an agent.http agent ran itself: map them as "
            "response.executed_calls)"
        )
    return TOKEN_CAP if reason == "length" else None


def _tools_fix(observation: Observation) -> str | None:
    if observation.finish_reason not in {"stop", "tool_calls"}:
        return None
    if observation.tool_calls_absent:
        return "the response left out message.tool_calls: calls not known (the run's note says when to state agent.missing_tool_calls: none)"
    return "message.tool_calls was not a list of calls with valid tool names"


def _with_fix(reason: str, fix: str | None, version: int) -> str:
    return f"{reason}: {fix}" if fix and version >= 2 else reason
