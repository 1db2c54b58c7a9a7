"""``response.judge``: the one check a model decides (opt-in, labelled judged and
non-deterministic in every view).

The question is a pure function of the contract's spec and the agent's answer, and
the verdict a pure function of the judge's recorded replies, so a replay asks
nothing and reproduces the verdict exactly. The agent's answer goes to the judge as
*data*: JSON-encoded (it cannot end its own string) inside markers whose nonce is a
digest of the whole question (it cannot guess them), under a system message that
says never to follow it. An answer therefore cannot rewrite its own criterion.
"""

from __future__ import annotations

import json
import re
from typing import Any

from behavegate.evidence.judge_prompt import asked_answer, question, redaction_of
from behavegate.judge.evidence import Evidence, incomplete
from behavegate.judged import JudgeEvidence, JudgeSpec, JudgeVote
from behavegate.model import Verdict
from behavegate.text import MARKER, one_line

KIND = "response_judge"
LABEL = "judged, non-deterministic"
REASON_CHARS = 300  # a judge's reason quoted in a verdict message (the JSON keeps each whole)


def expected_of(spec: JudgeSpec) -> dict[str, Any]:
    return {"expected": spec.expected, "criteria": spec.criteria, "votes": spec.votes}


_FENCE = re.compile(r"\A```[ \t]*(?:json|JSON)?[ \t]*\r?\n(?P<body>.*?)\r?\n?```\Z", re.S)


def read_vote(vote: JudgeVote) -> tuple[str, str]:
    """(``pass`` | ``fail`` | ``incomplete``, reason) of one recorded vote. Only the
    exact JSON shape counts (a ```json fence around it is tolerated); anything else,
    a refusal or an error is incomplete, never pass."""
    if vote.error is not None:
        return "incomplete", vote.error
    if vote.reply is None or not vote.reply.strip():
        return "incomplete", "the judge sent no reply text"
    text = vote.reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    try:
        value = json.loads(text, object_pairs_hook=_unique)
    except _Repeated as repeated:
        return "incomplete", f"the judge's reply repeats the key {one_line(repeated.key, 60)!r}: {one_line(vote.reply, 120)!r}"
    except (ValueError, RecursionError):
        return "incomplete", f"the judge's reply is not the JSON verdict: {one_line(vote.reply, 120)!r}"
    reason = value.get("reason") if isinstance(value, dict) else None
    if not isinstance(value, dict) or value.get("verdict") not in ("pass", "fail") or not isinstance(reason, str):
        return (
            "incomplete",
            f'the judge\'s reply lacks {{"verdict": "pass"|"fail", "reason": TEXT}}: {one_line(vote.reply, 120)!r}',
        )
    if not reason.strip():
        return "incomplete", f"the judge's reply gives no reason: {one_line(vote.reply, 120)!r}"
    return str(value["verdict"]), reason


class _Repeated(ValueError):
    """A JSON object names a key twice: which value was meant is unknowable (the last
    would win in json.loads), so the vote cannot be read."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise _Repeated(key)
        value[key] = item
    return value


def _about(spec: JudgeSpec, answer: str, vote: JudgeVote) -> bool:
    """Was ``vote`` asked about ``answer`` under this check: the exact question, or the
    question about the answer with the run's tokens masked (evidence/judge_client.py)."""
    if tuple(dict(m) for m in vote.question) == question(spec, answer):
        return True
    asked = asked_answer(spec, vote.question)
    return asked is not None and redaction_of(asked, answer, MARKER)


def decide(spec: JudgeSpec, answer: str, evidence: JudgeEvidence) -> tuple[str, str, dict[str, Any]]:
    """(status, message, observed) from the recorded votes: a strict majority of the
    ``votes`` asked decides; a tie, or too few readable votes, is incomplete."""
    votes = [read_vote(vote) for vote in evidence.votes]
    observed: dict[str, Any] = {
        "judged": True,
        "judge_model": evidence.model,
        "votes": [{"verdict": status, "reason": reason} for status, reason in votes],
    }
    label = f"[{LABEL}: judge {evidence.model!r}]"
    if not all(_about(spec, answer, vote) for vote in evidence.votes):
        # The recording answers another question (the contract's expected text or the answer changed).
        return "incomplete", f"{label} the recorded judge question is not this check's: judge the answer again", observed
    if len(votes) != spec.votes:
        return "incomplete", f"{label} {len(votes)} judge vote(s) recorded, {spec.votes} asked for", observed
    passes = sum(1 for status, _ in votes if status == "pass")
    fails = sum(1 for status, _ in votes if status == "fail")
    observed.update(passes=passes, fails=fails, incomplete=len(votes) - passes - fails)
    tally = f"{passes} pass, {fails} fail, {len(votes) - passes - fails} incomplete of {len(votes)} vote(s)"
    for status, count in (("pass", passes), ("fail", fails)):
        if 2 * count > len(votes):
            reason = next(r for s, r in votes if s == status)
            return status, f'{label} {status} ({tally}): "{one_line(reason, REASON_CHARS)}"', observed
    first = next((r for s, r in votes if s == "incomplete"), None)
    why = f"no majority ({tally})" + (f": {one_line(first, REASON_CHARS)}" if first else "")
    return "incomplete", f"{label} {why}", observed


def judge_response_judge(assertion: str, spec: JudgeSpec, ev: Evidence) -> Verdict:
    obs = ev.observation
    if ev.response_gap or obs is None or obs.response is None:
        return incomplete(assertion, KIND, ev.response_gap or "final response text was not observed", expected_of(spec))
    if obs.judge is None:
        return incomplete(
            assertion,
            KIND,
            f"[{LABEL}] no judge reply was recorded for this attempt (an offline run never asks a judge: "
            "record the run live with --judge-endpoint and --save-observations)",
            expected_of(spec),
        )
    status, message, observed = decide(spec, obs.response, obs.judge)
    return Verdict(assertion, KIND, status, message, expected_of(spec), observed)  # type: ignore[arg-type]
