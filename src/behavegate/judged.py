"""The types of judged checks (``response.judge``), beside the model as
``conversation.py`` is: what the contract asks (``JudgeSpec``), where the judge is
(``JudgeTarget``), and what it said (``JudgeVote``, ``JudgeEvidence``: evidence,
recorded with the observation)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from behavegate.frozen import Frozen

JSON = Any


class JudgeSpec(Frozen):
    """``response.judge``: is the answer consistent with ``expected`` (and does it meet
    ``criteria``)? Asked ``votes`` times; the majority decides, a tie is incomplete."""

    expected: str
    criteria: str | None = None
    votes: int = 1


class JudgeTarget(Frozen):
    """The contract's ``judge:`` block (version 2): where judged checks are asked.
    None = not set (the command line, then limits.py's defaults, decide)."""

    endpoint: str | None = None
    model: str | None = None
    timeout_seconds: float | None = None
    max_requests: int | None = None  # judge requests in one run
    max_tokens: int | None = None  # max_tokens sent with each judge request
    # Extra request-body keys (e.g. response_format, seed), never the request's own.
    parameters: Mapping[str, JSON] | None = None


class JudgeVote(Frozen):
    """One question put to the judge and what came back, verbatim (evidence: recorded,
    so a replay decides from it without asking again)."""

    question: tuple[Mapping[str, str], ...]  # the chat messages sent (system, user)
    reply: str | None = None  # the judge's message content; None when there was none
    error: str | None = None  # why there was no usable reply: HTTP error, timeout, refusal, budget

    def as_dict(self) -> dict[str, JSON]:
        return {"question": [dict(m) for m in self.question], "reply": self.reply, "error": self.error}


class JudgeEvidence(Frozen):
    """The judge's votes on one attempt's ``response.judge`` check, and which model gave them."""

    model: str
    votes: tuple[JudgeVote, ...]

    def as_dict(self) -> dict[str, JSON]:
        return {"model": self.model, "votes": [vote.as_dict() for vote in self.votes]}
