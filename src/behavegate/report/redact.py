"""Keeping the bearer token out of everything we persist or print.

Evaluation uses the raw evidence; the persisted copy (reports, artifacts,
recorded observations) replaces the exact token with ``[REDACTED]``, or with
asterisks when the token is shorter than that marker.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from behavegate.model import Attempt, Evaluation, Observation, ScenarioResult, ToolCall, Verdict

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


def redact_verdict(verdict: Verdict, secret: str) -> Verdict:
    return replace(verdict, message=redact_text(verdict.message, secret), observed=redact_json(verdict.observed, secret))


def redact_evaluation(evaluation: Evaluation, secret: str) -> Evaluation:
    """The same verdicts, with the token gone from every text a view can show."""

    def observation(value: Observation | None) -> Observation | None:
        return None if value is None else redact_observation(value, secret)

    def verdicts(values: tuple[Verdict, ...]) -> tuple[Verdict, ...]:
        return tuple(redact_verdict(v, secret) for v in values)

    def result(value: ScenarioResult) -> ScenarioResult:
        attempts = tuple(Attempt(a.index, a.status, verdicts(a.verdicts), observation(a.observation)) for a in value.attempts)
        return replace(value, verdicts=verdicts(value.verdicts), observation=observation(value.observation), attempts=attempts)

    gates = tuple(replace(g, message=redact_text(g.message, secret)) for g in evaluation.gates)
    return replace(evaluation, results=tuple(result(r) for r in evaluation.results), gates=gates)
