"""Judged checks (``response.judge``) across a run: counted, with the judge models that
decided them, and the one line every view shows so no reader takes them for
deterministic ones."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from behavegate.judge.judged_checks import KIND
from behavegate.model import ScenarioResult


def judge_note(report: Any) -> str | None:
    """The line every view shows when a judge decided checks (counted once: Report.derived)."""
    return note(report.derived.judged)


def judged_counts(results: tuple[ScenarioResult, ...], provenance: Mapping[str, Any]) -> dict[str, Any] | None:
    """Every attempt's judged verdicts (the representative attempt's for version 1), counted
    by status, and the judge models named by their records or the run's provenance."""
    found: Counter[str] = Counter()
    models: set[str] = set()
    for result in results:
        verdicts = [v for attempt in result.attempts for v in attempt.verdicts] if result.attempts else result.verdicts
        for verdict in verdicts:
            if verdict.kind == KIND:
                found[verdict.status] += 1
                if isinstance(verdict.observed, Mapping) and isinstance(verdict.observed.get("judge_model"), str):
                    models.add(verdict.observed["judge_model"])
    simulated, simulators = 0, set()
    for result in results:
        observations = [a.observation for a in result.attempts] if result.attempts else [result.observation]
        for observation in observations:
            went = observation.conversation if observation is not None else None
            if went is not None and went.simulator is not None:  # an LLM played the user in this attempt
                simulated += 1
                simulators.update({went.simulator.model} - {""})
    if not found and not simulated:
        return None
    judge = provenance.get("judge")
    if isinstance(judge, Mapping) and isinstance(judge.get("model"), str):
        models.add(judge["model"])
    return {
        "checks": sum(found.values()),
        "passed": found["pass"],
        "failed": found["fail"],
        "incomplete": found["incomplete"],
        "models": sorted(models),
        **({"simulated": simulated, "simulator_models": sorted(simulators)} if simulated else {}),
    }


def note(judged: Mapping[str, Any] | None) -> str | None:
    if judged is None:
        return None
    models = ", ".join(repr(m) for m in judged["models"]) or "none (no judge reply recorded)"
    lines = []
    if judged["checks"]:
        lines.append(
            f"Judged checks (decided by an LLM judge: non-deterministic): {judged['checks']} "
            f"({judged['passed']} pass, {judged['failed']} fail, {judged['incomplete']} incomplete); "
            f"judge model: {models}; a replay reuses the recorded judge replies"
        )
    if judged.get("simulated"):
        played = ", ".join(repr(m) for m in judged["simulator_models"]) or "none recorded"
        lines.append(
            f"Simulated users (an LLM played the user: non-deterministic): {judged['simulated']} attempts; "
            f"simulator model: {played}; a replay reuses the recorded messages and asks nothing"
        )
    return " | ".join(lines)
