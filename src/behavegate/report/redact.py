"""Keeping the bearer token out of everything we persist or print.

Evaluation uses the raw evidence; the persisted copy (reports, artifacts,
recorded observations) replaces the exact token with ``[REDACTED]``, or with
asterisks when the token is shorter than that marker.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from behavegate.model import Observation, ToolCall

MARKER = "[REDACTED]"


def redact_text(value: str, secret: str) -> str:
    replacement = MARKER if len(secret) >= len(MARKER) else "*" * len(secret)
    return value.replace(secret, replacement)


def redact_json(value: Any, secret: str) -> Any:
    if isinstance(value, str):
        return redact_text(value, secret)
    if isinstance(value, list):
        return [redact_json(item, secret) for item in value]
    if isinstance(value, dict):
        return {redact_text(str(key), secret): redact_json(item, secret) for key, item in value.items()}
    return value


def redact_observation(observation: Observation, secret: str) -> Observation:
    def text(value: str | None) -> str | None:
        return None if value is None else redact_text(value, secret)

    calls = observation.tool_calls
    if calls is not None:
        calls = tuple(ToolCall(redact_text(c.name, secret), redact_json(c.arguments, secret)) for c in calls)
    sources = observation.sources
    if sources is not None:
        sources = tuple(redact_text(s, secret) for s in sources)
    return replace(
        observation,
        response=text(observation.response),
        finish_reason=text(observation.finish_reason),
        tool_calls=calls,
        sources=sources,
        error=text(observation.error),
    )
