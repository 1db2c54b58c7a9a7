"""Oxy's numbers for a test file (oxy-hq/oxy, read at commit 52d7e74): the **score**
is the pass rate over every case and run (``Correctness::from_records``: the mean of
every run's 0/1 score), and **consistency** the fraction of cases whose runs all
reached the same verdict. A case passes when all its runs pass (Oxy's PASS; some is
FLKY, none FAIL).

Oxy's floor (``oxy test --min-accuracy``) is on the score, so a file's cases at 8/8
and 0/2 score 8/10 = 80%, where behavegate's own floor, the mean of the scenarios'
pass rates, gives 50%. Across files Oxy's ``average`` mode takes the mean of the
files' scores (100% and 0% give 50%), and ``all`` needs every file to reach it.

An attempt behavegate could not judge (a judge reply it cannot read, an agent that
did not answer) is incomplete, never a pass: it counts in the runs, so the score can
only be decided where it would stay on the same side of the floor had it passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from behavegate.frozen import Frozen
from behavegate.gating import GateName
from behavegate.model import GateResult, ScenarioResult, Status

EPSILON = 1e-12


class CaseScore(Frozen):
    scenario_id: str
    passed: int
    failed: int
    incomplete: int
    runs: int

    @property
    def pass_rate(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def consistent(self) -> bool:
        """Every run reached the same verdict (Oxy's ``consistent``); a run that could
        not be judged agrees with nothing."""
        return self.runs > 0 and self.runs in (self.passed, self.failed)

    @property
    def label(self) -> str:
        """Oxy's word for the case: PASS (every run), FLKY (some), FAIL (none); and
        INCOMPLETE when no run was judged pass or fail."""
        if self.runs and self.passed == self.runs:
            return "PASS"
        if self.passed:
            return "FLKY"
        return "FAIL" if self.failed else "INCOMPLETE"

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario_id,
            "passed": self.passed,
            "failed": self.failed,
            "incomplete": self.incomplete,
            "runs": self.runs,
            "pass_rate": round(self.pass_rate, 6),
            "consistent": self.consistent,
            "verdict": self.label,
        }


class FileScore(Frozen):
    """One Oxy file's numbers."""

    cases: tuple[CaseScore, ...]

    @property
    def runs(self) -> int:
        return sum(case.runs for case in self.cases)

    @property
    def passed(self) -> int:
        return sum(case.passed for case in self.cases)

    @property
    def incomplete(self) -> int:
        return sum(case.incomplete for case in self.cases)

    @property
    def score(self) -> float:
        return self.passed / self.runs if self.runs else 0.0

    @property
    def best(self) -> float:
        """The score had every incomplete run passed."""
        return (self.passed + self.incomplete) / self.runs if self.runs else 0.0

    @property
    def consistency(self) -> float:
        return sum(case.consistent for case in self.cases) / len(self.cases) if self.cases else 0.0

    @property
    def judged(self) -> bool:
        return self.passed + sum(case.failed for case in self.cases) > 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 6),
            "consistency": round(self.consistency, 6),
            "runs": self.runs,
            "passed_runs": self.passed,
            "incomplete_runs": self.incomplete,
            "cases": len(self.cases),
            "passed_cases": sum(case.label == "PASS" for case in self.cases),
            "consistent_cases": sum(case.consistent for case in self.cases),
        }


def file_score(results: Sequence[ScenarioResult]) -> FileScore:
    cases = []
    for result in results:
        statuses = [attempt.status for attempt in result.attempts]
        runs = result.reliability.runs if result.reliability is not None else len(statuses)
        passed, failed = statuses.count("pass"), statuses.count("fail")
        cases.append(CaseScore(result.scenario.id, passed, failed, runs - passed - failed, runs))
    return FileScore(tuple(cases))


def score_gates(results: Sequence[ScenarioResult], floor: float | None) -> tuple[GateResult, ...]:
    """The file's score as a gate: with a floor, ``min_pass_rate`` on the score
    (exit 1 when missed, as Oxy); without one, ``score``, which reports the number
    and fails nothing (Oxy exits 0 whatever the cases did), but is incomplete when a
    run could not be judged."""
    scored = file_score(results)
    observed = scored.as_dict()
    if floor is not None:
        gate = floor_gate("min_pass_rate", [scored], floor, observed)
        consistency = f"; consistency {scored.consistency:.1%} over {len(scored.cases)} cases"
        return (GateResult(gate.gate, gate.status, gate.message + consistency, gate.expected, gate.observed),)
    status: Status = "incomplete" if scored.incomplete or not scored.judged else "pass"
    message = f"score {scored.score:.1%} over {scored.runs} runs, consistency {scored.consistency:.1%} (no floor set)"
    if status == "incomplete":
        message += f"; {scored.incomplete} run(s) could not be judged"
    return (GateResult("score", status, message, None, observed),)


def floor_gate(name: str, files: Sequence[FileScore], floor: float, observed: Any = None) -> GateResult:
    """The floor on the mean of the files' scores (one file: its score)."""
    if not files or not any(one.judged for one in files):
        return GateResult(name, "incomplete", f"no run was judged, so the floor of {floor:.1%} cannot be judged", floor, observed)
    mean = sum(one.score for one in files) / len(files)
    best = sum(one.best for one in files) / len(files)
    what = "score" if len(files) == 1 else f"mean score of {len(files)} files"
    if mean >= floor - EPSILON:
        return GateResult(name, "pass", f"{what} {mean:.1%} reaches {floor:.1%}", floor, observed)
    if best < floor - EPSILON:
        return GateResult(name, "fail", f"expected a {what} of at least {floor:.1%}, observed {mean:.1%}", floor, observed)
    return GateResult(
        name, "incomplete", f"{what} {mean:.1%} is below {floor:.1%} only because runs could not be judged", floor, observed
    )


def decides_alone(gate: str) -> bool:
    """Gates that decide the run instead of every scenario having to pass: a floor,
    or an Oxy file's score (a failing case alone never fails an Oxy run). Report.floor_decides
    says the same."""
    return GateName.parse(gate).floor
