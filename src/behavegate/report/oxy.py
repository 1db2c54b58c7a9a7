"""An Oxy test file's numbers as the report holds them: the JSON report's
``behavegate.oxy`` (settings, score, consistency, each case), and the case labels
every view uses (judge/oxy_score.py computes the numbers)."""

from __future__ import annotations

from typing import Any

from behavegate.judge.oxy_score import FileScore
from behavegate.oxy_file import OxyFile

PROMPT_SHOWN = 60  # Oxy's case label: the prompt cut to 60 characters when unnamed


def case_label(meta: OxyFile, scenario_id: str) -> str:
    case = next((c for c in meta.cases if c.scenario_id == scenario_id), None)
    if case is None:
        return scenario_id
    if case.name is not None:
        return case.name
    prompt = case.prompt.strip()
    return prompt if len(prompt) <= PROMPT_SHOWN else prompt[:PROMPT_SHOWN] + "…"


def block(meta: OxyFile, score: FileScore) -> dict[str, Any]:
    """The JSON report's ``behavegate.oxy``: the file's settings, numbers and cases (the
    score derived once with the Report)."""
    by_id = {case.scenario_id: case for case in meta.cases}
    cases = []
    for case_score in score.cases:
        case = by_id.get(case_score.scenario_id)
        entry = {"index": None if case is None else case.index, "name": None if case is None else case.name}
        cases.append({**entry, **case_score.as_dict()})
    return {
        "format": "oxy-test-file",
        "name": meta.name,
        "target": meta.target,
        "settings": {"runs": meta.runs, "concurrency": meta.concurrency, "judge_model": meta.judge_model},
        **score.as_dict(),
        "formula": "score: passes over every case and run; consistency: cases whose runs all agreed",
        "cases_detail": cases,
    }
