"""``response.judge``: the one check a model decides (opt-in, labelled judged and
non-deterministic in every view). The verdict is a pure function of the judge's
recorded replies, so a replay reproduces it exactly."""

from __future__ import annotations

from behavegate.judge.evidence import Evidence, incomplete
from behavegate.model import JudgeSpec, Verdict

KIND = "response_judge"


def expected_of(spec: JudgeSpec) -> dict[str, object]:
    return {"expected": spec.expected, "criteria": spec.criteria, "votes": spec.votes}


def judge_response_judge(assertion: str, spec: JudgeSpec, ev: Evidence) -> Verdict:
    obs = ev.observation
    if ev.response_gap or obs is None or obs.response is None:
        return incomplete(assertion, KIND, ev.response_gap or "final response text was not observed", expected_of(spec))
    return incomplete(assertion, KIND, "no judge reply was recorded for this attempt", expected_of(spec))
