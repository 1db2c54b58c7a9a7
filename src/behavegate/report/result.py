"""The typed result of a run: judged once, shown by every view.

Every renderer (table, JSON, JUnit, summary, annotations, outputs), the
evidence artifacts and the recorded observation file take a :class:`Report`
and derive nothing that another view could derive differently: the status,
the counts, each scenario's file and line, which gates decide the run.
The skylos-shaped JSON is one view of it, :meth:`Report.to_json`.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from behavegate.model import Contract, Evaluation, GateResult, Scenario, ScenarioResult, Status, Timing, Verdict

RUNS_DIR = (".behavegate", "runs")


@dataclass(frozen=True, slots=True)
class RunFacts:
    """Everything about the run that is not evidence: ids, clock, limits."""

    run_id: str
    started_at: str
    ended_at: str
    duration_ms: int
    max_scenarios: int
    max_seconds: float
    tool_call_count: int = 0


@dataclass(frozen=True, slots=True)
class RunIssue:
    """Something that went wrong around the judging (e.g. artifacts not written)."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Location:
    """Where in the repository a scenario or assertion is written."""

    file: str
    line: int | None


@dataclass(frozen=True)
class Report:
    """The judged run, with evidence already redacted for display and persistence."""

    contract: Contract
    evaluation: Evaluation
    mode: str  # "offline" | "live"
    provenance: Mapping[str, Any]
    facts: RunFacts
    contract_path: str  # as shown to people: repository-relative where possible
    version: str
    artifacts: bool = False
    # Set by the command that ran it: scenarios left out by the selection, and
    # per-scenario wall time. None (not 0 or empty) when nobody measured them.
    skipped: tuple[Scenario, ...] | None = None
    timings: tuple[Timing, ...] | None = None
    issues: tuple[RunIssue, ...] = ()

    # -- the verdict ----------------------------------------------------------

    @property
    def status(self) -> Status:
        """The run's verdict. A run whose artifacts could not be written is at best incomplete."""
        status = self.evaluation.status
        if self.issues and status == "pass":
            return "incomplete"
        return status

    @property
    def results(self) -> tuple[ScenarioResult, ...]:
        return self.evaluation.results

    @property
    def gates(self) -> tuple[GateResult, ...]:
        return self.evaluation.gates

    @property
    def floor_decides(self) -> bool:
        """A suite pass-rate floor decides the run: single scenarios failing do not fail it."""
        return any(gate.gate.startswith("min_pass_rate") for gate in self.gates)

    @property
    def repeated(self) -> bool:
        return any(result.reliability is not None for result in self.results)

    def counted(self, result: ScenarioResult) -> Status:
        """What a scenario contributes to the run's verdict (``pass`` under a floor:
        the floor gate carries it)."""
        return "pass" if self.floor_decides else result.status

    # -- counts -----------------------------------------------------------------

    def scenario_counts(self) -> Counter[str]:
        return Counter(result.status for result in self.results)

    @staticmethod
    def checks(result: ScenarioResult) -> tuple[Verdict, ...]:
        """The assertion checks a scenario made: one per assertion per attempt."""
        if result.attempts:
            return tuple(verdict for attempt in result.attempts for verdict in attempt.verdicts)
        return result.verdicts

    @classmethod
    def check_counts(cls, result: ScenarioResult) -> Counter[str]:
        return Counter(verdict.status for verdict in cls.checks(result))

    def total_check_counts(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for result in self.results:
            total.update(self.check_counts(result))
        return total

    # -- where things are written ------------------------------------------------

    def location(self, scenario: Scenario, assertion: str | None = None) -> Location:
        """The file and line of a scenario (or one of its assertions), through includes."""
        line = scenario.assertion_lines.get(assertion) if assertion else None
        line = line or scenario.line
        if not scenario.file:
            return Location(self.contract_path, line)
        folder = posixpath.dirname(self.contract_path)
        return Location(posixpath.normpath(posixpath.join(folder, scenario.file)), line)

    @property
    def run_dir(self) -> str | None:
        if not self.artifacts or any(issue.code == "harness_artifact_write_failed" for issue in self.issues):
            return None
        return "/".join((*RUNS_DIR, self.facts.run_id))

    def seconds(self, index: int) -> float:
        if self.timings is None or index >= len(self.timings):
            return 0.0
        return self.timings[index].duration_ms / 1000

    def latency(self) -> dict[str, float] | None:
        from behavegate.judge.aggregate import percentile

        values = [
            attempt.observation.latency_ms
            for result in self.results
            for attempt in result.attempts
            if attempt.observation is not None and attempt.observation.latency_ms is not None
        ]
        if not values:
            return None
        return {"attempts": len(values), "p50": percentile(values, 50), "p95": percentile(values, 95), "max": max(values)}

    # -- the skylos-shaped JSON view ------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The report as skylos shapes it, plus our ``behavegate`` block.

        Computed once per Report (the digests cover it); callers must not mutate it.
        """
        cached: dict[str, Any] | None = self.__dict__.get("_json")
        if cached is None:
            from behavegate.report.build import report_json

            cached = report_json(self)
            object.__setattr__(self, "_json", cached)
        return cached

    @property
    def evidence_digest(self) -> str | None:
        digest = self.to_json()["evidence_digest"]
        return None if digest is None else str(digest)
