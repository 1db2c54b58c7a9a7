"""Two stored runs compared scenario by scenario, for ``behavegate view``: pure.

The comparison is the baseline comparison (``report.baseline.compare_records``): run A is
read as a baseline report is, run B reduced to the same record, so the findings (newly
failing, fixed, pass rate changes, tool sequences) follow the rules of docs/baselines.md.
Beside them each scenario carries its status on both sides, the checks that newly fail or
newly pass, and the evidence of each side: the answer and the tool calls of its attempts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from behavegate.frozen import Frozen
from behavegate.gating import GateName
from behavegate.limits import VIEW_ATTEMPTS_SHOWN as ATTEMPTS_SHOWN
from behavegate.limits import VIEW_CALLS_SHOWN as CALLS_SHOWN
from behavegate.report.comparison import Comparison, Counts, Finding, tally


class Attempt(Frozen):
    """What one attempt said and called (agent text: shown inert, cut by the renderer)."""

    number: int
    status: str
    answer: str | None  # None: no response observed
    calls: tuple[tuple[str, str], ...] | None  # (tool name, arguments as JSON); None: calls not observed
    error: str | None = None
    calls_not_shown: int = 0
    observed: bool = True  # False: nothing was observed (not sent, or its evidence is missing)


class Side(Frozen):
    status: str
    attempts: tuple[Attempt, ...]
    attempts_not_shown: int = 0


class CheckChange(Frozen):
    assertion: str
    before: Counts | None
    after: Counts | None


class ScenarioDiff(Frozen):
    id: str
    a: Side | None  # None: not in that run
    b: Side | None
    newly_failing: tuple[CheckChange, ...]
    newly_passing: tuple[CheckChange, ...]
    findings: tuple[Finding, ...]

    @property
    def changed(self) -> bool:
        status_a = None if self.a is None else self.a.status
        status_b = None if self.b is None else self.b.status
        return status_a != status_b or bool(self.newly_failing or self.newly_passing or self.findings)


class RunDiff(Frozen):
    a: str  # run ids
    b: str
    comparison: Comparison
    scenarios: tuple[ScenarioDiff, ...]  # changed first, each group in B's order then A's

    @property
    def changed(self) -> int:
        return sum(1 for scenario in self.scenarios if scenario.changed)


def attempts_of(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A scenario's attempts; a version-1 scenario is its one attempt."""
    tries = scenario.get("attempts")
    if isinstance(tries, list):
        return tries
    return [
        {"attempt": 1, "status": scenario["status"], "assertions": scenario["assertions"], "observation": scenario["observation"]}
    ]


def side(scenario: Mapping[str, Any]) -> Side:
    tries = attempts_of(scenario)
    return Side(
        status=str(scenario["status"]),
        attempts=tuple(_attempt(index, attempt) for index, attempt in enumerate(tries[:ATTEMPTS_SHOWN], 1)),
        attempts_not_shown=max(0, len(tries) - ATTEMPTS_SHOWN),
    )


def _attempt(index: int, attempt: Mapping[str, Any]) -> Attempt:
    number = attempt.get("attempt")
    observation = attempt.get("observation")
    status = str(attempt["status"])
    if not isinstance(observation, Mapping):
        return Attempt(number if isinstance(number, int) else index, status, None, None, observed=False)
    response = observation.get("response")
    raw_calls = observation.get("tool_calls")
    calls = None
    if isinstance(raw_calls, list):
        calls = tuple(
            (str(call.get("name")), "" if call.get("arguments") is None else json.dumps(call["arguments"], sort_keys=True))
            for call in raw_calls[:CALLS_SHOWN]
            if isinstance(call, Mapping)
        )
    error = observation.get("error")
    return Attempt(
        number=number if isinstance(number, int) else index,
        status=status,
        answer=response if isinstance(response, str) else None,
        calls=calls,
        error=None if error is None else str(error),
        calls_not_shown=max(0, len(raw_calls) - CALLS_SHOWN) if isinstance(raw_calls, list) else 0,
    )


def check_counts(scenario: Mapping[str, Any]) -> dict[str, Counts]:
    return tally([(str(v["assertion"]), str(v["status"])) for v in a["assertions"]] for a in attempts_of(scenario))


def check_changes(
    before: Mapping[str, Counts], after: Mapping[str, Counts]
) -> tuple[tuple[CheckChange, ...], tuple[CheckChange, ...]]:
    """Checks failing in B that never failed in A (or were not there), and checks failing
    in A that no longer fail in B (and were judged there)."""
    failing = tuple(
        CheckChange(key, before.get(key), counts)
        for key, counts in after.items()
        if counts.failed and (key not in before or not before[key].failed)
    )
    passing = tuple(
        CheckChange(key, counts, after[key])
        for key, counts in before.items()
        if counts.failed and key in after and not after[key].failed and after[key].passed
    )
    return failing, passing


def diff_runs(a_id: str, a: Mapping[str, Any], b_id: str, b: Mapping[str, Any]) -> RunDiff:
    """Run B against run A (both checked reports, as ``checked_run`` returns them)."""
    from behavegate.report.baseline import compare_records, contract_note_of
    from behavegate.report.baseline_file import parse_baseline

    # Both sides read by the baseline reader: one reduction, the comparison's own rules.
    baseline = parse_baseline(json.dumps(a), f"run {a_id}")
    now = parse_baseline(json.dumps(b), f"run {b_id}").run
    ours = b.get("behavegate") or {}
    skipped = frozenset(str(s.get("id")) for s in ours.get("skipped") or () if isinstance(s, Mapping))
    floor = any(GateName.parse(str(gate["gate"])).floor for gate in b.get("gates") or ())
    path = str(ours.get("contract_path") or b["contract"]["path"])
    comparison = compare_records(baseline, now, skipped, floor, contract_note_of(baseline, str(b["contract"]["digest"]), path))
    by_a = {str(s["id"]): s for s in a["scenarios"]}
    by_b = {str(s["id"]): s for s in b["scenarios"]}
    order = list(by_b) + [sid for sid in by_a if sid not in by_b]
    found: dict[str, list[Finding]] = {}
    for finding in comparison.findings():
        found.setdefault(finding.scenario, []).append(finding)
    rows = []
    for sid in order:
        old, new = by_a.get(sid), by_b.get(sid)
        failing, passing = check_changes({} if old is None else check_counts(old), {} if new is None else check_counts(new))
        rows.append(
            ScenarioDiff(
                id=sid,
                a=None if old is None else side(old),
                b=None if new is None else side(new),
                newly_failing=failing,
                newly_passing=passing,
                findings=tuple(found.get(sid, ())),
            )
        )
    ordered = sorted(enumerate(rows), key=lambda item: (not item[1].changed, item[0]))
    return RunDiff(a=a_id, b=b_id, comparison=comparison, scenarios=tuple(row for _, row in ordered))


def suite_findings(diff: RunDiff) -> Sequence[Finding]:
    """Findings about the run as a whole (its gates, the suite)."""
    return [finding for finding in diff.comparison.findings() if not finding.scenario]
