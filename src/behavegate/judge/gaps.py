"""Evidence gates: why a kind of evidence cannot be judged (so its assertions
are incomplete, never pass). One place, used by evaluation and by every
assertion that needs the whole observation."""

from __future__ import annotations

from behavegate.model import Observation

MISSING = "scenario observation is missing"


def observation_gap(observation: Observation | None) -> str | None:
    if observation is None:
        return MISSING
    if observation.error:
        return f"scenario observation failed: {observation.error}"
    return None


def response_gap(observation: Observation | None) -> str | None:
    """Why final-response evidence (text, refusal, sources) cannot be judged."""
    gap = observation_gap(observation)
    if gap is not None or observation is None:
        return gap
    reason = observation.finish_reason
    if reason is not None and reason != "stop":
        return f"final response is incomplete (finish_reason={reason!r})"
    if observation.response_complete is False:
        return f"final response is incomplete (finish_reason={reason or 'unknown'!r})"
    if observation.response_complete is None:
        return "final response completion evidence was not observed"
    return None


def tool_gap(observation: Observation | None) -> str | None:
    """Why tool-call evidence cannot be judged."""
    gap = observation_gap(observation)
    if gap is not None or observation is None:
        return gap
    reason = observation.finish_reason
    if reason is not None and reason not in {"stop", "tool_calls"}:
        return f"tool-call evidence is incomplete (finish_reason={reason!r})"
    if observation.tool_calls_complete is False:
        return f"tool-call evidence is incomplete (finish_reason={reason or 'unknown'!r})"
    if observation.tool_calls_complete is None:
        return "tool-call completion evidence was not observed"
    return None
