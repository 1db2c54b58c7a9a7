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
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from behavegate.frozen import Frozen, replace
from behavegate.gating import FailOn, GateKind, fail_on_status
from behavegate.model import (
    Contract,
    Evaluation,
    GateResult,
    Observation,
    RunFacts,
    Scenario,
    ScenarioResult,
    Status,
    Timing,
    Verdict,
)
from behavegate.report import floor
from behavegate.report.derived import Derived, provenance_note
from behavegate.report.digests import EVIDENCE_KEYS, count_statuses, harness_block, selected_digest
from behavegate.report.json_blocks import gate_block
from behavegate.report.json_text import EncodedReport, chunks, encode, size_within
from behavegate.report.layout import LAYOUT, NO_ARTIFACTS, RUNS_DIR, run_paths
from behavegate.report.oxy import block as oxy_block
from behavegate.text import path_text

if TYPE_CHECKING:  # annotations only: a run without --baseline (--shard) never builds a comparison (a shard block)
    from behavegate.evidence.shard import ShardBlock
    from behavegate.report.comparison import Comparison, Finding


class RunIssue(Frozen):
    """Something that went wrong around the judging (e.g. artifacts not written)."""

    code: str
    message: str


class Location(Frozen):
    """Where in the repository a scenario or assertion is written."""

    file: str
    line: int | None


class Report(Frozen, dict=True):  # dict: room for the cached views below
    """The judged run, with evidence already redacted for display and persistence."""

    contract: Contract
    evaluation: Evaluation
    mode: str  # "offline" | "live"
    provenance: Mapping[str, Any]
    facts: RunFacts
    contract_path: str  # as shown to people: repository-relative where possible
    version: str
    derived: Derived  # what views show beside the verdicts, derived once (report/derived.py)
    artifacts: bool = False
    # Set by the command that ran it: scenarios left out by the selection, and
    # per-scenario wall time. None (not 0 or empty) when nobody measured them.
    skipped: tuple[Scenario, ...] | None = None
    timings: tuple[Timing, ...] | None = None
    issues: tuple[RunIssue, ...] = ()
    # --baseline: this run compared with a baseline report; --fail-on: what decides the exit code.
    baseline: Comparison | None = None
    fail_on: FailOn = FailOn.INCOMPLETE
    shard: ShardBlock | None = None  # set on a shard's report (--shard K/N): not the run's verdict
    # What the run says once instead of in every check it explains (an agent that could not be
    # reached, a setting that decides how evidence is read): every view shows them.
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.derived.of is not self.evaluation:  # a view would show another evaluation's facts
            raise ValueError("a Report's derived facts must be derived from its own evaluation (report.build.rejudged)")

    # -- the verdict ----------------------------------------------------------

    @property
    def status(self) -> Status:
        """The run's verdict. A run whose artifacts could not be written is at best incomplete."""
        status = self.evaluation.status
        if self.issues and status == "pass":
            return "incomplete"
        return status

    @property
    def gate_status(self) -> Status:
        """What ``--fail-on`` makes of the run, and so the exit code: the run's status
        (``incomplete``, the default), only its failures (``fail``), or only what
        regressed against the baseline (``regression``)."""
        return fail_on_status(self.status, self.fail_on, self.baseline.status if self.baseline is not None else None)

    @property
    def gates_on_regressions(self) -> bool:
        return self.fail_on == FailOn.REGRESSION and self.baseline is not None

    @property
    def results(self) -> tuple[ScenarioResult, ...]:
        return self.evaluation.results

    @property
    def gates(self) -> tuple[GateResult, ...]:
        return self.evaluation.gates

    @property
    def floor_decides(self) -> bool:
        """A suite pass-rate floor decides the run: single scenarios failing do not fail it."""
        return any(gate.name.floor for gate in self.gates)

    @property
    def repeated(self) -> bool:
        return any(result.reliability is not None for result in self.results)

    def counted(self, result: ScenarioResult) -> Status:
        """What a scenario contributes to the run's verdict (under a floor: report/floor.py)."""
        if self.baseline is not None and self.gates_on_regressions:
            return self.baseline.scenario_status(result.scenario.id)
        return floor.counted(result, self.gates) if self.floor_decides else result.status

    @property
    def evidence_note(self) -> str | None:
        """What the evidence source held beside what was judged (report/derived.py)."""
        return provenance_note(self.provenance)

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
        line = line or scenario.line or None  # 0: a row of a golden set, not a line of this file
        if not scenario.file:
            return Location(self.contract_path, line)
        folder = posixpath.dirname(self.contract_path)
        return Location(posixpath.normpath(posixpath.join(folder, scenario.file)), line)

    def gate_location(self, gate: GateResult) -> Location:  # no line for a command-line gate
        kind = gate.name.kind  # threshold_mode: all names one min_pass_rate[<file>] gate per file, at one line
        name = GateKind.MIN_PASS_RATE.value if kind is GateKind.MIN_PASS_RATE else gate.gate
        return Location(self.contract_path, self.contract.gates.lines.get(name))

    def finding_location(self, finding: Finding) -> Location:
        """Where a baseline finding points: its assertion's line, its scenario's, or
        the contract file (a removed scenario, a suite gate)."""
        scenario = self._scenarios.get(finding.scenario)
        if scenario is None:
            return Location(self.contract_path, None)
        return self.location(scenario, finding.assertion)

    @property
    def run_dir(self) -> str | None:
        if not self.artifacts or any(issue.code == "harness_artifact_write_failed" for issue in self.issues):
            return None
        return "/".join((*RUNS_DIR, self.facts.run_id))

    def seconds(self, index: int) -> float:
        if self.timings is None or index >= len(self.timings):
            return 0.0
        return self.timings[index].duration_ms / 1000

    @property
    def cost(self) -> float | None:
        """The run's cost in USD (agent.pricing); None when the contract prices nothing."""
        return None if self.derived.usage is None else self.derived.usage.cost

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
        """The report as skylos shapes it, plus our ``behavegate`` block; callers must not mutate it."""
        return self._json

    @cached_property
    def _json(self) -> dict[str, Any]:
        evidence, scenarios = _evidence(self)
        return {**evidence, "scenarios": list(scenarios), **self.json_rest()}

    def encoded(self) -> EncodedReport:
        """The evidence of :meth:`to_json`, encoded once per Report (the size check and every
        JSON view): its digest, and the text of every JSON view (:meth:`json_chunks`)."""
        return self._encoded

    @cached_property
    def _encoded(self) -> EncodedReport:
        evidence, scenarios = _evidence(self)
        return encode(evidence, scenarios, EVIDENCE_KEYS + (("gates",) if "gates" in evidence else ()))

    @cached_property
    def _scenarios(self) -> dict[str, Scenario]:
        """Judged and skipped scenarios by id: where a baseline finding points."""
        return {s.id: s for s in (*(r.scenario for r in self.results), *(self.skipped or ()))}

    def json_rest(self) -> dict[str, Any]:
        """The keys of :meth:`to_json` that are not evidence: its digest, the harness block, ours."""
        return self._rest

    @cached_property
    def _rest(self) -> dict[str, Any]:
        return _rest(self, self.encoded().digest)

    def json_chunks(self) -> Iterator[str]:
        """:meth:`to_json` as every JSON view writes it (``indent=2``, sorted keys), in pieces."""
        return chunks(self.encoded(), self.json_rest())

    def within_size_limit(self, limit: int) -> bool:
        """Does the JSON view, without our ``behavegate`` block, fit ``limit`` (skylos's measure)?"""
        return size_within(self.encoded(), self.json_rest(), leave_out="behavegate", limit=limit)

    def gated(self, baseline: Comparison | None, fail_on: FailOn | str) -> Report:
        """This report with its baseline comparison and ``--fail-on`` (a new Report: its JSON
        text is encoded again when a view asks, never carried over from another Report)."""
        return replace(self, baseline=baseline, fail_on=FailOn(fail_on))

    @property
    def evidence_digest(self) -> str | None:
        return None if self.issues else self.encoded().digest


# --- the skylos-shaped JSON view ------------------------------------------------------


def _evidence(report: Report) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """The JSON view's evidence keys but ``scenarios``, and its scenarios one at a time."""
    contract, evaluation = report.contract, report.evaluation
    results = evaluation.results
    v2 = contract.version >= 2
    views = {id(r.observation): _observation(r.observation, v2) for r in results}  # once: for the digest and the scenario
    shown = {r.scenario.id: seen for r in results if (seen := views[id(r.observation)]) is not None}
    provenance = {**report.provenance, "selected_digest": selected_digest(shown, contract.scenario_ids())}
    if v2:
        counted = [v for r in results for attempt in r.attempts for v in attempt.verdicts]
    else:
        counted = [v for r in results for v in r.verdicts]
    assertion_summary, coverage = count_statuses(counted)
    statuses = report.scenario_counts()
    evidence: dict[str, Any] = {
        "schema_version": 1,
        "kind": "agent_behavior",
        "status": report.status,
        "mode": report.mode,
        "contract": {"version": contract.version, "path": path_text(contract.path), "digest": contract.digest},
        "summary": {
            "scenario_count": len(results),
            "passed_scenarios": statuses["pass"],
            "failed_scenarios": statuses["fail"],
            "incomplete_scenarios": statuses["incomplete"],
            **assertion_summary,
        },
        "coverage": coverage,
        "provenance": provenance,
        "artifacts": dict(LAYOUT if report.artifacts else NO_ARTIFACTS),
    }
    if v2:
        # Version-2 suite gates are evidence too; version-1 reports have none, so
        # their digest stays exactly skylos's.
        evidence["gates"] = [g.as_dict() for g in evaluation.gates]
    return evidence, (_scenario(r, v2, views) for r in results)


def scenario_views(report: Report) -> Iterator[tuple[ScenarioResult, dict[str, Any] | None, dict[str, Any]]]:
    """Each judged scenario, its observation as the JSON view shows it, and its entry in the
    JSON view's ``scenarios``: what a streamed report (report/json_stream.py) writes a part at a time."""
    v2 = report.contract.version >= 2
    for result in report.evaluation.results:
        shown = _observation(result.observation, v2)
        yield result, shown, _scenario(result, v2, {id(result.observation): shown})


def where(report: Report, scenario: Scenario) -> dict[str, Any]:
    """A scenario's entry in ``behavegate.scenarios``."""
    return _where(report, scenario)


def _observation(observation: Observation | None, v2: bool) -> dict[str, Any] | None:
    if observation is None:
        return None
    return observation.as_dict_v2() if v2 else observation.as_dict()


def _scenario(result: ScenarioResult, v2: bool, made: dict[int, dict[str, Any] | None]) -> dict[str, Any]:
    """One scenario of the JSON view. Its verdicts and observation are its representative
    attempt's: the same objects, made into dictionaries once (``made``: by :func:`_evidence`)."""
    lists: dict[int, list[dict[str, Any]]] = {}
    observations: dict[int, dict[str, Any] | None] = {}

    def verdicts(items: tuple[Verdict, ...]) -> list[dict[str, Any]]:
        if id(items) not in lists:
            lists[id(items)] = [verdict.as_dict() for verdict in items]
        return lists[id(items)]

    def observation(item: Observation | None) -> dict[str, Any] | None:
        if id(item) not in observations:
            observations[id(item)] = made.pop(id(item)) if id(item) in made else _observation(item, v2)
        return observations[id(item)]

    entry: dict[str, Any] = {
        "id": result.scenario.id,
        "status": result.status,
        "assertions": verdicts(result.verdicts),
        "observation": observation(result.observation),
    }
    if v2:
        entry["reliability"] = result.reliability.as_dict() if result.reliability else None
        entry["attempts"] = [
            {
                "attempt": attempt.index + 1,
                "status": attempt.status,
                "assertions": verdicts(attempt.verdicts),
                "observation": observation(attempt.observation),
                **({"scores": dict(attempt.scores)} if attempt.scores is not None else {}),  # graded
            }
            for attempt in result.attempts
        ]
    return entry


def _rest(report: Report, digest: str) -> dict[str, Any]:
    """The keys of the JSON view after its evidence: the digest over it, the harness block, ours."""
    contract, evaluation, results = report.contract, report.evaluation, report.evaluation.results
    paths = run_paths(contract.project_root, report.facts.run_id) if report.artifacts else None
    rest: dict[str, Any] = {
        "evidence_digest": digest,
        "harness": harness_block(contract, evaluation, report.facts, paths, evaluation.status),
    }
    extra: dict[str, Any] = {
        "version": report.version,
        "contract_path": report.contract_path,
        "run_dir": report.run_dir,
        "scenarios": {r.scenario.id: _where(report, r.scenario) for r in results},
    }
    rest["behavegate"] = extra
    if (judged := report.derived.judged) is not None:
        extra["judged"] = judged
    if (usage := report.derived.usage) is not None:  # priced, or a spend budget was given
        extra["usage"] = usage.as_dict()
    if contract.version >= 2:
        extra["latency_ms"] = report.latency()
        extra["tags"] = {r.scenario.id: list(r.scenario.tags) for r in results if r.scenario.tags}
        extra["tool_calls_key"] = contract.agent.missing_tool_calls
        if (scores := report.derived.scores) is not None:  # graded scores per tag and suite
            extra["scores"] = scores
    if contract.oxy is not None and report.derived.oxy is not None:  # an Oxy file's numbers
        extra["oxy"] = oxy_block(contract.oxy, report.derived.oxy)
    if report.skipped is not None:
        extra["skipped"] = [{"id": s.id, "line": s.line} for s in report.skipped]
    if report.timings is not None:
        extra["seconds"] = {r.scenario.id: report.seconds(i) for i, r in enumerate(results)}
    gate_block(extra, report.baseline, report.fail_on, report.gate_status)
    if report.shard is not None:
        extra["shard"] = report.shard.as_dict()
    if report.notes:
        extra["notes"] = list(report.notes)
    if report.issues:
        # The evidence could not be sealed: no digest vouches for it.
        rest["issues"] = [{"code": issue.code, "message": issue.message} for issue in report.issues]
        rest["evidence_digest"] = None
    return rest


def _where(report: Report, scenario: Scenario) -> dict[str, Any]:
    where: dict[str, Any] = {"line": scenario.line, "assertion_lines": dict(scenario.assertion_lines)}
    if scenario.file:
        where["file"] = report.location(scenario).file
    return where
