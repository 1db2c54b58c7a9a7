"""What a live run observed, as an observation file that replays offline to
the same verdicts (``--save-observations``). Built from the Report, so what is
recorded is what every other view showed: redacted, attempt by attempt."""

from __future__ import annotations

from typing import Any

from behavegate import indented_json
from behavegate.report.result import Report


def observation_file(report: Report, runs: int | None = None) -> str:
    """Version 1: a valid skylos v1 file. Fields that were not observed are left out;
    where live shape checks made a completion flag disagree with the finish reason,
    the finish reason is left out (the evidence stays incomplete), and empty text,
    which v1 files cannot carry, is left out. Version 2: every attempt, verbatim,
    with latency, usage, steps and tool errors, and ``runs`` when the run was given
    ``--runs`` (its replay then expects as many attempts, not the contract's count)."""
    v2 = report.contract.version >= 2
    scenarios = []
    for result in report.results:
        observed = [a.observation for a in result.attempts] if v2 else [result.observation]
        for observation in observed:
            if observation is None:
                continue
            data = observation.as_dict_v2() if v2 else observation.as_dict()
            item = {key: value for key, value in data.items() if value is not None}
            if "tool_calls" in item:
                item["tool_calls"] = [
                    {k: v for k, v in call.items() if not (k == "arguments" and v is None)} for call in item["tool_calls"]
                ]
            if not v2:
                _fit_version_1(item)
            scenarios.append(item)
    document: dict[str, Any] = {"version": 2 if v2 else 1, "scenarios": scenarios}
    if v2 and runs is not None:
        document["runs"] = runs
    return indented_json.dumps(document, sort_keys=True)


def _fit_version_1(item: dict[str, Any]) -> None:
    if item.get("response") is not None and not str(item["response"]).strip():
        del item["response"]
    reason = item.get("finish_reason")
    if reason is not None and (
        item.get("response_complete") is not (reason == "stop")
        or item.get("tool_calls_complete") is not (reason in {"stop", "tool_calls"})
    ):
        del item["finish_reason"]
