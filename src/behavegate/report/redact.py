"""Keeping the bearer token out of everything we persist or print.

Evaluation uses the raw evidence; the persisted copy (reports, artifacts,
recorded observations) replaces the token with ``[REDACTED]``, or with
asterisks when the token is shorter than that marker. Every rendered view
(table, JSON, JUnit, summary, annotations, outputs, artifacts, saved
observations) is made from that persisted copy, so it is the one place to
mask. Verdict messages quote evidence through ``repr`` (ours and
jsonschema's), so the token is masked in every encoding behavegate itself
produces, not only verbatim; the renderers' own escaping (JSON, XML, workflow
commands) then only ever sees the marker.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from behavegate.conversation import Conversation
from behavegate.frozen import replace
from behavegate.judged import JudgeEvidence, JudgeVote
from behavegate.model import Evaluation, Observation, ScenarioResult, ToolCall, Verdict

MARKER = "[REDACTED]"


def _xml(text: str, quotes: bool) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#x27;") if quotes else text


def _workflow(text: str, property_value: bool) -> str:
    """GitHub workflow-command escaping (annotation messages and their properties)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


@lru_cache(maxsize=4)
def encoded_forms(secret: str) -> tuple[str, ...]:
    """The token as it can appear inside a larger text, longest first."""
    forms = {
        secret,
        # repr() of a string holding the token: single-quoted unless that string has ' and no "
        repr(secret + "'\"")[1:-4],
        ascii(secret + "'\"")[1:-4],
        secret.encode("unicode_escape").decode("ascii"),
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1],
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret, safe=""),
        quote_plus(secret),
        _xml(secret, quotes=False),
        _xml(secret, quotes=True),
        _xml(secret, quotes=False).replace('"', "&quot;"),
        _workflow(secret, property_value=False),
        _workflow(secret, property_value=True),
    }
    if '"' not in secret:
        forms.add(repr(secret + "'")[1:-2])  # ...and double-quoted when it does
        forms.add(ascii(secret + "'")[1:-2])
    return tuple(sorted(forms, key=lambda form: (-len(form), form)))


def redact_text(value: str, secret: str) -> str:
    replacement = MARKER if len(secret) >= len(MARKER) else "*" * len(secret)
    for form in encoded_forms(secret):
        if form in value:
            value = value.replace(form, replacement)
    return value


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
        tool_errors=None if observation.tool_errors is None else tuple(map(text, observation.tool_errors)),
        conversation=_conversation(observation.conversation, secret),
        judge=_judge(observation.judge, secret),
    )


def _judge(judge: JudgeEvidence | None, secret: str) -> JudgeEvidence | None:
    """The judge's question quotes the agent's answer, and its reply may quote it back."""
    if judge is None:
        return None

    def text(value: str | None) -> str | None:
        return None if value is None else redact_text(value, secret)

    votes = tuple(
        JudgeVote(tuple({k: redact_text(v, secret) for k, v in m.items()} for m in vote.question), text(vote.reply), text(vote.error))
        for vote in judge.votes
    )  # fmt: skip
    return replace(judge, votes=votes)


def _conversation(conversation: Conversation | None, secret: str) -> Conversation | None:
    if conversation is None:
        return None
    results = tuple(
        replace(r, name=redact_text(r.name, secret), content=redact_json(r.content, secret),
                error=None if r.error is None else redact_text(r.error, secret))
        for r in conversation.results
    )  # fmt: skip
    return replace(conversation, results=results)


def redact_verdict(verdict: Verdict, secret: str) -> Verdict:
    return replace(verdict, message=redact_text(verdict.message, secret), observed=redact_json(verdict.observed, secret))


def redact_evaluation(evaluation: Evaluation, secret: str) -> Evaluation:
    """The same verdicts, with the token gone from every text a view can show."""

    def observation(value: Observation | None) -> Observation | None:
        return None if value is None else redact_observation(value, secret)

    def verdicts(values: tuple[Verdict, ...]) -> tuple[Verdict, ...]:
        return tuple(redact_verdict(v, secret) for v in values)

    def result(value: ScenarioResult) -> ScenarioResult:
        attempts = tuple(
            replace(a, verdicts=verdicts(a.verdicts), observation=observation(a.observation)) for a in value.attempts
        )
        return replace(value, verdicts=verdicts(value.verdicts), observation=observation(value.observation), attempts=attempts)

    gates = tuple(replace(g, message=redact_text(g.message, secret)) for g in evaluation.gates)
    return replace(evaluation, results=tuple(result(r) for r in evaluation.results), gates=gates)
