"""The typed result of a suite run: several contracts, each judged by the
single-contract path into its own :class:`Report`. Nothing is re-judged here:
the suite's status is the worst of its contracts' (failure beats incomplete,
incomplete beats pass) and its totals are their sums."""

from __future__ import annotations

from collections import Counter

from behavegate.errors import ExitCode
from behavegate.frozen import Frozen, field
from behavegate.gating import fail_on_status
from behavegate.model import GateResult, Status
from behavegate.report.result import Report

_RANK: dict[str, int] = {"pass": 0, "incomplete": 1, "fail": 2}


def worst(statuses: list[Status]) -> Status:
    """Failure beats incomplete; incomplete beats pass (an empty list passes)."""
    return max(statuses, key=lambda status: _RANK[status], default="pass")


class SuiteRun(Frozen):
    reports: tuple[Report, ...]
    # Gates over several contracts: the floor on the mean score of the Oxy test files
    # (Oxy's --threshold-mode average, judge/oxy_score.py).
    gates: tuple[GateResult, ...] = field(default=())

    @property
    def status(self) -> Status:
        return worst([report.status for report in self.reports] + [gate.status for gate in self.gates])

    @property
    def gate_status(self) -> Status:
        """What decides the exit code: the worst of the contracts' gate statuses and the suite's gates."""
        suite_gates = worst([gate.status for gate in self.gates])
        if self.reports:  # one --fail-on for the whole suite: its own gates are held to it too
            suite_gates = fail_on_status(suite_gates, self.reports[0].fail_on, None)
        return worst([report.gate_status for report in self.reports] + [suite_gates])

    def scenario_counts(self) -> Counter[str]:
        total: Counter[str] = Counter({"pass": 0, "fail": 0, "incomplete": 0})
        for report in self.reports:
            total.update(report.scenario_counts())
        return total

    def total_check_counts(self) -> Counter[str]:
        total: Counter[str] = Counter({"pass": 0, "fail": 0, "incomplete": 0})
        for report in self.reports:
            total.update(report.total_check_counts())
        return total

    @property
    def cost(self) -> float | None:
        """The suite's cost in USD: its priced contracts' (None when none is priced)."""
        costs = [report.cost for report in self.reports if report.cost is not None]
        return sum(costs) if costs else None

    def scenario_total(self) -> int:
        return sum(len(report.results) for report in self.reports)

    def totals(self) -> dict[str, int]:
        """The JSON ``summary`` block: contracts, scenarios and assertion checks by status."""
        scenarios, checks = self.scenario_counts(), self.total_check_counts()
        return {
            "contracts": len(self.reports),
            "scenarios": self.scenario_total(),
            "passed": scenarios["pass"],
            "failed": scenarios["fail"],
            "incomplete": scenarios["incomplete"],
            "assertions": sum(checks.values()),
            "assertions_passed": checks["pass"],
            "assertions_failed": checks["fail"],
            "assertions_incomplete": checks["incomplete"],
        }

    def to_json(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "schema_version": 1,
            "kind": "agent_behavior_suite",
            "status": self.status,
            "gate_status": self.gate_status,
            "summary": self.totals(),
            "contracts": [report.to_json() for report in self.reports],
        }
        if self.gates:  # the floor on the Oxy files' mean score
            payload["gates"] = [gate.as_dict() for gate in self.gates]
        return payload


def exit_status(run: Report | SuiteRun) -> ExitCode:
    """The one rule from a judged run to the process exit status, for the CLI (test and
    merge), the Action (which returns the CLI's), the API and the pytest plugin's session:
    what ``--fail-on`` makes of it. A shard's report is evidence for a merge, not a verdict."""
    if isinstance(run, Report) and run.shard is not None:
        return ExitCode.PASS
    return ExitCode.of(run.gate_status)
