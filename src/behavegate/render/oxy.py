"""An Oxy test file's numbers in every view: per-case pass rates (Oxy's PASS, FLKY,
FAIL), the score and the consistency (judge/oxy_score.py).

``lines`` is the table's part (the JSON report's ``behavegate.oxy`` is report/oxy.py), at
three levels of detail as ``oxy test`` has them: ``quiet`` (the cases and the
numbers), ``normal`` (and why each run that did not pass did not), ``verbose``
(and, for those runs, the agent's tool calls, its answer and the judge's reasoning).
Every piece of untrusted text (prompts, answers, judge replies) is shown escaped.
"""

from __future__ import annotations

from typing import Any

from behavegate.gating import GateKind
from behavegate.judge.oxy_score import FileScore
from behavegate.model import Attempt, ScenarioResult
from behavegate.report.oxy import case_label
from behavegate.report.result import Report
from behavegate.text import one_line, visible

ANSWER_LINES = 40  # lines of one answer shown with --verbose


def scored(report: Report) -> FileScore | None:
    return report.derived.oxy


def headline(score: FileScore) -> str:
    passed = sum(case.label == "PASS" for case in score.cases)
    consistent = sum(case.consistent for case in score.cases)
    return (
        f"Oxy score {score.score:.1%} ({score.passed}/{score.runs} runs passed) · "
        f"consistency {score.consistency:.1%} ({consistent}/{len(score.cases)} cases) · "
        f"{passed}/{len(score.cases)} cases passing"
    )


def status(report: Report) -> str:
    """The table's headline status. An Oxy file without a floor passes whatever its cases
    did (``oxy test`` exits 0 without ``--min-accuracy``), so the headline says there was
    no floor and gives the score instead of a bare "pass"."""
    score = scored(report)
    if score is None or report.status != "pass" or not any(gate.name.kind is GateKind.SCORE for gate in report.gates):
        return report.status
    return f"no floor set: score {score.score:.1%} (--min-pass-rate sets one)"


def lines(report: Report, detail: str = "normal") -> list[str]:
    meta, score = report.contract.oxy, scored(report)
    if meta is None or score is None:
        return []
    labels = {r.scenario.id: one_line(case_label(meta, r.scenario.id), 80) for r in report.results}
    width = max((len(label) for label in labels.values()), default=0)
    out = [""]
    for case in score.cases:
        more = f", {case.incomplete} not judged" if case.incomplete else ""
        out.append(f"  {case.label} {labels[case.scenario_id].ljust(width)} ({case.passed}/{case.runs}{more})")
    out.append(headline(score))
    if detail == "quiet":
        return out
    for result in report.results:
        shown = [attempt for attempt in result.attempts if attempt.status != "pass"]
        if not shown:
            continue
        out.append("")
        out.append(f"× {labels[result.scenario.id]}: {one_line(result.scenario.prompt, 200)}")
        for attempt in shown:
            out.extend(_attempt(result, attempt, detail))
    return out


def _attempt(result: ScenarioResult, attempt: Attempt, detail: str) -> list[str]:
    out = [f"  run {attempt.index + 1}: {attempt.status}"]
    observation = attempt.observation
    if detail == "verbose" and observation is not None:
        calls = observation.tool_calls or ()
        if calls:
            out.append("    steps:")
            out.extend(f"      {one_line(call.name, 64)}({one_line(_arguments(call.arguments), 200)})" for call in calls)
        if observation.response is not None:
            out.append("    agent output:")
            answer = visible(observation.response.replace("\r\n", "\n")).split("\n")
            out.extend(f"      {one_line(text, 300)}" for text in answer[:ANSWER_LINES])
            if len(answer) > ANSWER_LINES:
                out.append(f"      ({len(answer) - ANSWER_LINES} more lines in the JSON report)")
    for verdict in attempt.verdicts:
        if verdict.status == "pass":
            continue
        out.append(f"    {verdict.assertion}: {one_line(verdict.message, 300)}")
        reasoning = _reasoning(verdict.observed)
        if reasoning is not None and detail == "verbose":
            out.append(f"      judge reasoning: {one_line(reasoning, 1000)}")
    return out


def _arguments(arguments: Any) -> str:
    import json

    return "" if arguments is None else json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def _reasoning(observed: Any) -> str | None:
    """The judge's reason, where the judged verdict records one."""
    if isinstance(observed, dict):
        votes = observed.get("votes")
        if isinstance(votes, list):
            reasons = [str(vote.get("reason")) for vote in votes if isinstance(vote, dict) and vote.get("reason") is not None]
            return " | ".join(reasons) if reasons else None
        for key in ("reason", "reasons"):
            value = observed.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list):
                return " | ".join(str(item) for item in value)
    return None
