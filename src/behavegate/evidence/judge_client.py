"""The judge, asked: one more evidence step after an attempt's agent evidence is in.

For each attempt whose scenario has ``response.judge``, the judge endpoint (an
OpenAI-compatible Chat Completions URL the person running allowed, checked by
evidence/trust.py exactly as the agent's is) is asked ``votes`` times, at
temperature 0, within the run's time budget and the judge's own request budget.
Every question and reply is kept on the observation (``JudgeEvidence``): the
verdict is decided from that record (judge/judged_checks.py), live or replayed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from behavegate.evidence.chat import EndpointError, parse_body
from behavegate.evidence.judge_prompt import question
from behavegate.evidence.trust import Credentials, Endpoint
from behavegate.frozen import Frozen, field, not_compared, not_shown
from behavegate.judged import JudgeEvidence, JudgeSpec, JudgeVote
from behavegate.limits import MAX_RESPONSE_BYTES, RESPONSE_MAX_TEXT
from behavegate.model import Observation, Scenario

if TYPE_CHECKING:  # the network is imported where a request is sent, not where the judge is checked
    from behavegate.evidence.transport import Client

JudgeSend = Callable[[tuple[bytes, ...], float], Awaitable[Any]]
"""One judge request: the JSON body and the deadline (``time.monotonic``) → the parsed
response. Raises EndpointError (its words name the judge endpoint)."""


class RequestCount:
    """Judge requests sent so far in the run (one event loop: no lock needed)."""

    def __init__(self) -> None:
        self.sent = 0


@not_shown("hidden")
@not_compared("count")
class JudgeSettings(Frozen):
    endpoint: Endpoint | None  # None: ``send`` is given by the caller (tests, an in-process judge)
    credentials: Credentials | None
    model: str
    timeout_seconds: float
    max_tokens: int
    max_requests: int
    count: RequestCount = field(default_factory=RequestCount)
    parameters: Mapping[str, Any] = field(default_factory=dict)  # judge.parameters: extra request-body keys
    # The run's bearer tokens (the agent's, the judge's own): never in a question, whatever
    # the agent echoes. Only the person running chooses which secret goes where.
    hidden: tuple[str, ...] = ()

    def provenance(self) -> dict[str, Any]:
        """What the report says about the judge (never the token, never the URL itself)."""
        return {
            "model": self.model,
            "endpoint_source": self.endpoint.source if self.endpoint else None,
            "endpoint_fingerprint": self.endpoint.fingerprint if self.endpoint else None,
            "authenticated": self.credentials is not None,
            "contract_endpoint_consent": self.endpoint.consent if self.endpoint else False,
            "temperature": 0,
            "timeout_seconds": self.timeout_seconds,
            "max_tokens": self.max_tokens,
            "max_requests": self.max_requests,
            "parameters": dict(self.parameters),
            "requests_sent": self.count.sent,
        }


def judge_request(
    model: str, messages: tuple[dict[str, str], ...], max_tokens: int, parameters: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The judge's request: the contract's ``judge.parameters`` first, the request's own keys over them."""
    own = {"model": model, "messages": list(messages), "temperature": 0, "max_tokens": max_tokens, "stream": False}
    return {**(parameters or {}), **own}


def reply_of(raw: Any) -> tuple[str | None, str | None]:
    """(message content, error) from a Chat Completions response: a refusal, a filtered
    or cut reply, or no text is an error (the vote is then incomplete)."""
    try:
        choice = raw["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        return None, "the judge's response has no choices[0].message"
    if not isinstance(message, dict):
        return None, "the judge's response has no choices[0].message"
    content = message.get("content")
    reply = content[:RESPONSE_MAX_TEXT] if isinstance(content, str) else None
    if isinstance(content, str) and len(content) > RESPONSE_MAX_TEXT:
        # A prefix is not the reply: never read a verdict from it (the record keeps the prefix, and says so).
        return reply, f"the judge's reply exceeds {RESPONSE_MAX_TEXT} characters (recorded cut at that length)"
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        return reply, f"the judge refused: {refusal[:300]!r}"
    reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    if reason == "content_filter":
        return reply, "the judge's reply was filtered (finish_reason content_filter)"
    if reason == "length":
        return reply, "the judge's reply was cut at its max_tokens (finish_reason length)"
    if reply is None:
        return None, "the judge's response has no message content"
    return reply, None


def answer_for_judge(answer: str, hidden: tuple[str, ...]) -> str:
    """The agent's answer as the judge may see it: each of the run's tokens replaced by the
    marker in every encoding the report masks (judge/judged_checks.py accepts the recorded
    question as this answer's, and a saved, redacted answer replays to the same question)."""
    from behavegate.text import MARKER, redact_text

    for secret in sorted(hidden, key=len, reverse=True):
        if secret:
            answer = redact_text(answer, secret, MARKER)
    return answer


def wants_judge(scenario: Scenario, observation: Observation) -> bool:
    """Ask only about a whole final answer: anything less is incomplete without asking."""
    return (
        scenario.expect.judge is not None
        and observation.error is None
        and observation.response is not None
        and observation.response_complete is not False
    )


async def ask(send: JudgeSend, judge: JudgeSettings, spec: JudgeSpec, answer: str, run_deadline: float | None) -> JudgeEvidence:
    """``spec.votes`` questions, one after another (each is one request in the budget)."""
    messages = question(spec, answer)
    body = (json.dumps(judge_request(judge.model, messages, judge.max_tokens, judge.parameters)).encode("utf-8"),)
    votes: list[JudgeVote] = []
    for _ in range(spec.votes):
        now = time.monotonic()
        if run_deadline is not None and now >= run_deadline:
            votes.append(JudgeVote(messages, error="not asked: the run's time budget (--max-seconds) ran out"))
            continue
        if judge.count.sent >= judge.max_requests:
            votes.append(JudgeVote(messages, error=f"not asked: the run's judge request budget ({judge.max_requests}) is spent"))
            continue
        judge.count.sent += 1
        deadline = now + judge.timeout_seconds
        if run_deadline is not None:
            deadline = min(deadline, run_deadline)
        try:
            raw = await send(body, deadline)
        except EndpointError as failed:
            if run_deadline is not None and time.monotonic() >= run_deadline:
                votes.append(JudgeVote(messages, error="cut in flight: the run's time budget (--max-seconds) ran out"))
            else:
                votes.append(JudgeVote(messages, error=str(failed).replace("agent endpoint", "judge endpoint")))
            continue
        reply, problem = reply_of(raw)
        votes.append(JudgeVote(messages, reply, problem))
    return JudgeEvidence(judge.model, tuple(votes))


def http_judge(client: Client, judge: JudgeSettings) -> JudgeSend:
    from behavegate.evidence.transport import Exchange, endpoint_target, post

    url, headers = endpoint_target(judge.endpoint, judge.credentials)

    async def send(pieces: tuple[bytes, ...], deadline: float) -> Any:
        return parse_body(await post(client, Exchange(url, pieces, headers, deadline, MAX_RESPONSE_BYTES)))

    return send


async def judged(
    send: JudgeSend, judge: JudgeSettings, scenario: Scenario, observation: Observation, run_deadline: float | None
) -> Observation:
    """The observation with the judge's votes on it (unchanged when nothing is asked)."""
    from behavegate.frozen import replace

    if not wants_judge(scenario, observation):
        return observation
    assert scenario.expect.judge is not None and observation.response is not None
    evidence = await ask(send, judge, scenario.expect.judge, answer_for_judge(observation.response, judge.hidden), run_deadline)
    return replace(observation, judge=evidence)
