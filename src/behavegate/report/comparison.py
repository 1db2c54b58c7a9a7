"""The typed comparison of a run with a baseline report (``--baseline``).

Both sides are reduced to the same record (:class:`RunRecord`: per scenario the
attempt counts, per assertion the verdict counts, the tool sequences), the
baseline read from its JSON report (``report.baseline_file``), this run from
its Report (``report.baseline``). The comparison of the two is a
:class:`Comparison`, computed once and held by the Report (``Report.baseline``):
every view renders it, none re-judges it. docs/baselines.md explains the rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from behavegate.frozen import Frozen
from behavegate.limits import BASELINE_MAX_LISTED
from behavegate.model import Status

# What a finding is, in words a reviewer reads (the JSON report keeps the key).
REGRESSIONS = {
    "newly_failing": "newly failing",
    "new_failure": "new failure",
    "pass_rate_drop": "pass rate dropped",
    "gate_failing": "gate newly failing",
}
UNRESOLVED = {"unresolved": "could not compare"}
IMPROVEMENTS = {"fixed": "fixed", "pass_rate_rise": "pass rate rose", "gate_fixed": "gate fixed"}
CHANGES = {
    "new_scenario": "new scenario",
    "removed_scenario": "removed scenario",
    "removed_safety_scenario": "removed safety scenario",
    "removed_assertion": "removed assertion",
    "not_run": "not run",
    "within_noise": "within sampling error",
    "tool_sequence": "tool sequence changed",
}
LABELS = {**REGRESSIONS, **UNRESOLVED, **IMPROVEMENTS, **CHANGES}
# A scenario with one of these checks guards safety: removing it is worth a warning.
SAFETY_KINDS = frozenset({"safety_pii", "safety_injection", "tool_forbidden", "refusal"})


class Counts(Frozen):
    """How often something passed, failed or could not be judged (over attempts)."""

    passed: int
    failed: int
    incomplete: int = 0

    @property
    def runs(self) -> int:
        return self.passed + self.failed + self.incomplete

    @property
    def judged(self) -> int:
        return self.passed + self.failed

    def text(self) -> str:
        """``7/8``, or ``pass``/``fail``/``incomplete`` for a single attempt."""
        if self.runs == 1:
            return "pass" if self.passed else "fail" if self.failed else "incomplete"
        extra = f" ({self.incomplete} incomplete)" if self.incomplete else ""
        return f"{self.passed}/{self.runs}{extra}"

    def as_dict(self) -> dict[str, int]:
        return {"passed": self.passed, "failed": self.failed, "incomplete": self.incomplete}


def one(status: str) -> Counts:
    """A single verdict as counts."""
    return Counts(int(status == "pass"), int(status == "fail"), int(status not in ("pass", "fail")))


def tally(attempts: Iterable[Iterable[tuple[str, str]]]) -> dict[str, Counts]:
    """Per assertion id, its (assertion, status) verdicts counted over the attempts."""
    counted: dict[str, Counter[str]] = {}
    for verdicts in attempts:
        for assertion, status in verdicts:
            counted.setdefault(assertion, Counter())[status] += 1
    return {key: Counts(c["pass"], c["fail"], c.total() - c["pass"] - c["fail"]) for key, c in counted.items()}


def normalized(calls: Sequence[tuple[str, int | None]]) -> tuple[str, ...]:
    """The tool names of one attempt in call order; calls one model step requested
    together (trace evidence: the same ``group``) run in no defined order, so they
    are sorted by name."""
    names: list[str] = []
    index = 0
    while index < len(calls):
        group, end = calls[index][1], index + 1
        while group is not None and end < len(calls) and calls[end][1] == group:
            end += 1
        names.extend(sorted(name for name, _ in calls[index:end]))
        index = end
    return tuple(names)


class ScenarioRecord(Frozen):
    """What a comparison needs of one scenario of one run."""

    id: str
    status: Status
    repeated: bool  # judged on a sample of attempts (runs > 1)
    attempts: Counts
    assertions: Mapping[str, Counts]  # assertion id -> its verdicts over the attempts
    safety: bool  # it guards safety: a PII, injection, forbidden-tool or refusal check
    sequences: tuple[tuple[str, ...], ...] = ()  # per attempt that recorded its tool calls: the names, normalized


class RunRecord(Frozen):
    scenarios: tuple[ScenarioRecord, ...]
    gates: Mapping[str, Status]

    def by_id(self) -> dict[str, ScenarioRecord]:
        return {scenario.id: scenario for scenario in self.scenarios}


class BaselineSource(Frozen):
    """Which report was the baseline, as its own JSON says."""

    path: str  # as shown to people
    status: str
    contract_path: str
    contract_digest: str
    contract_version: int
    run_id: str | None = None
    started_at: str | None = None


class Baseline(Frozen):
    """A baseline report, read: where it came from and what it recorded."""

    source: BaselineSource
    run: RunRecord


class Finding(Frozen):
    """One thing the comparison found, about a scenario (``assertion`` None), one of
    its assertions, or a suite gate (``scenario`` ""; the gate is ``assertion``)."""

    kind: str
    scenario: str
    assertion: str | None
    message: str
    before: Counts | None = None
    after: Counts | None = None
    p_value: float | None = None
    # False: a suite pass-rate floor decides the run, and absorbs what one scenario does
    # (the suite's own pass rate and gates are compared instead).
    gating: bool = True

    @property
    def label(self) -> str:
        return LABELS[self.kind]

    @property
    def subject(self) -> str:
        """``scenario``, ``scenario assertion``, ``gate NAME`` or ``the suite``."""
        if not self.scenario:
            return f"gate {self.assertion}" if self.assertion else "the suite"
        return f"{self.scenario} {self.assertion}" if self.assertion else self.scenario

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "scenario": self.scenario or None,
            "assertion": self.assertion,
            "message": self.message,
            "baseline": None if self.before is None else self.before.as_dict(),
            "current": None if self.after is None else self.after.as_dict(),
            "p_value": None if self.p_value is None else round(self.p_value, 6),
            "gating": self.gating,
        }


class Comparison(Frozen):
    """This run against its baseline: what regressed, what could not be compared,
    what improved, what changed otherwise."""

    source: BaselineSource
    contract_note: str  # same contract, changed since, or another file
    alpha: float  # family-wise: the chance sampling noise alone reports a pass-rate regression
    threshold: float  # the per-test p-value threshold that keeps it (Tarone)
    tests: int  # pass-rate comparisons that could reach significance at all
    regressions: tuple[Finding, ...]
    unresolved: tuple[Finding, ...]
    improvements: tuple[Finding, ...]
    changes: tuple[Finding, ...]
    compared: int  # scenarios in both runs
    still_failing: int  # scenarios failing now that failed in the baseline too
    # Repeated scenarios whose runs are too few for any drop short of a total break to be
    # significant: (scenario, baseline attempts judged, attempts now).
    total_break_only: tuple[tuple[str, int, int], ...] = ()
    partial_drop_runs: int = 0  # attempts a side at which a partial drop can be significant

    @property
    def status(self) -> Status:
        """The regression gate: fail on a regression, incomplete when one cannot be
        ruled out, else pass (pre-existing failures do not count)."""
        if any(finding.gating for finding in self.regressions):
            return "fail"
        return "incomplete" if any(finding.gating for finding in self.unresolved) else "pass"

    @property
    def gating_regressions(self) -> int:
        return sum(1 for finding in self.regressions if finding.gating)

    def scenario_status(self, scenario: str) -> Status:
        """What a scenario contributes to the regression gate."""
        if any(finding.scenario == scenario and finding.gating for finding in self.regressions):
            return "fail"
        if any(finding.scenario == scenario and finding.gating for finding in self.unresolved):
            return "incomplete"
        return "pass"

    def findings(self) -> tuple[Finding, ...]:
        return (*self.regressions, *self.unresolved, *self.improvements, *self.changes)

    def as_dict(self) -> dict[str, Any]:
        source = self.source
        return {
            "status": self.status,
            "report": source.path,
            "baseline_status": source.status,
            "baseline_run_id": source.run_id,
            "baseline_started_at": source.started_at,
            "contract": {"path": source.contract_path, "digest": source.contract_digest, "version": source.contract_version},
            "contract_note": self.contract_note,
            "test": "one-sided Fisher exact, Tarone-adjusted",
            "alpha": self.alpha,
            "threshold": round(self.threshold, 6),
            "tests": self.tests,
            "compared_scenarios": self.compared,
            "still_failing_scenarios": self.still_failing,
            "total_break_only": [
                {"scenario": scenario, "baseline_attempts": before, "attempts": now}
                for scenario, before, now in self.total_break_only[:BASELINE_MAX_LISTED]
            ],
            "partial_drop_runs": self.partial_drop_runs,
            **_listed("regressions", self.regressions),
            **_listed("unresolved", self.unresolved),
            **_listed("improvements", self.improvements),
            **_listed("changes", self.changes),
        }


def _listed(name: str, findings: tuple[Finding, ...]) -> dict[str, Any]:
    """Each list, bounded (the report has a size limit); what is left out is counted."""
    shown: dict[str, Any] = {name: [finding.as_dict() for finding in findings[:BASELINE_MAX_LISTED]]}
    if len(findings) > BASELINE_MAX_LISTED:
        shown[f"{name}_not_listed"] = len(findings) - BASELINE_MAX_LISTED
    return shown
