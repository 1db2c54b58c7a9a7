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

from typing import Any

from behavegate.conversation import Conversation
from behavegate.frozen import replace
from behavegate.judged import JudgeEvidence, JudgeVote
from behavegate.model import Evaluation, Observation, ScenarioResult, ToolCall, Verdict
from behavegate.text import redact_text  # one secret masked in every encoding (text.py: the judge uses it too)


def redact_json(value: Any, secret: str, replacement: str | None = None) -> Any:
    if isinstance(value, str):
        return redact_text(value, secret, replacement)
    if isinstance(value, list):
        return [redact_json(item, secret, replacement) for item in value]
    if isinstance(value, dict):
        return {redact_text(str(key), secret, replacement): redact_json(item, secret, replacement) for key, item in value.items()}
    return value


def redact_observation(observation: Observation, secret: str, replacement: str | None = None) -> Observation:
    def text(value: str | None) -> str | None:
        return None if value is None else redact_text(value, secret, replacement)

    calls = observation.tool_calls
    if calls is not None:
        calls = tuple(
            ToolCall(redact_text(c.name, secret, replacement), redact_json(c.arguments, secret, replacement)) for c in calls
        )
    sources = observation.sources
    if sources is not None:
        sources = tuple(redact_text(s, secret, replacement) for s in sources)
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
        JudgeVote(
            tuple({k: redact_text(v, secret) for k, v in m.items()} for m in vote.question), text(vote.reply), text(vote.error)
        )
        for vote in judge.votes
    )
    return replace(judge, votes=votes)


def _conversation(conversation: Conversation | None, secret: str) -> Conversation | None:
    if conversation is None:
        return None
    results = tuple(
        replace(
            r,
            name=redact_text(r.name, secret),
            content=redact_json(r.content, secret),
            error=None if r.error is None else redact_text(r.error, secret),
        )
        for r in conversation.results
    )
    went = tuple(
        replace(
            t,
            user=redact_text(t.user, secret),
            response=None if t.response is None else redact_text(t.response, secret),
            sources=None if t.sources is None else tuple(redact_text(s, secret) for s in t.sources),
        )
        for t in conversation.user_turns
    )
    simulator = conversation.simulator
    if simulator is not None:
        simulator = replace(simulator, replies=tuple(redact_text(reply, secret) for reply in simulator.replies))
    return replace(conversation, results=results, user_turns=went, simulator=simulator)


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


# --- values a safety check flagged ------------------------------------------------------------


def _flags(verdicts: tuple[Verdict, ...]) -> bool:
    return any(v.kind == "safety_pii" and v.status == "fail" for v in verdicts)


def mask_flagged(evaluation: Evaluation) -> Evaluation:
    """Every verdict of an attempt whose ``safety.pii`` check failed, with the values it
    found masked (judge/safety_checks.flagged_values); the observations, the evidence,
    are kept as observed."""

    def masked(scenario: Any, observation: Observation | None, verdicts: tuple[Verdict, ...]) -> tuple[Verdict, ...]:
        # Imported here: only an attempt with a flagged value needs the detectors' patterns.
        from behavegate.judge.safety import mask
        from behavegate.judge.safety_checks import flagged_values

        found = flagged_values(scenario, observation, verdicts)
        for value in found:
            verdicts = tuple(
                replace(
                    v, message=redact_text(v.message, value, mask(value)), observed=redact_json(v.observed, value, mask(value))
                )
                for v in verdicts
            )
        return verdicts

    def result(value: ScenarioResult) -> ScenarioResult:
        if not _flags(value.verdicts) and not any(_flags(a.verdicts) for a in value.attempts):
            return value
        attempts = tuple(replace(a, verdicts=masked(value.scenario, a.observation, a.verdicts)) for a in value.attempts)
        return replace(value, verdicts=masked(value.scenario, value.observation, value.verdicts), attempts=attempts)

    return replace(evaluation, results=tuple(result(r) for r in evaluation.results))


def masked_observation(scenario: Any, observation: Observation | None, verdicts: tuple[Verdict, ...]) -> Observation | None:
    """The observation as a view may show it: the flagged values masked (see mask_flagged)."""
    from behavegate.judge.safety_checks import flagged_values

    found = flagged_values(scenario, observation, verdicts)
    if observation is None or not found:
        return observation
    from behavegate.judge.safety import mask

    for value in found:
        observation = redact_observation(observation, value, mask(value))
    return observation
