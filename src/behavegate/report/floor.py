"""A scenario that did not pass, under a suite floor: which gates count it, what it
contributes to the run's verdict, and how every view words it. Never "pass": a
failed scenario is called failed, and the gate that decides names itself.

Under a floor (``gates.min_pass_rate``, ``--min-pass-rate``, an Oxy file's score)
single scenarios do not decide the run; the gates over them do. A scenario counts
as its own status when a gate that counts it did not pass (it is part of why the
run failed: a safety scenario under a failing ``by_tag`` gate), else as absorbed
by the floor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from behavegate.model import GateResult, Scenario, ScenarioResult, Status

if TYPE_CHECKING:
    from behavegate.report.result import Report

SEVERITY: dict[str, int] = {"pass": 0, "incomplete": 1, "fail": 2}


def counts_scenario(gate: GateResult, scenario: Scenario) -> bool:
    """Whether ``gate`` is computed over the scenario (latency and shard gates are not)."""
    name = gate.gate
    if name in ("min_pass_rate", "score", "min_score"):
        return True
    if name.startswith("min_pass_rate["):  # threshold_mode: all, one gate per source file
        return name[len("min_pass_rate[") : -1] == (scenario.source or "contract")
    if name.startswith("tag["):
        return name[4:].split("]", 1)[0] in scenario.tags
    return False


def gates_over(gates: Sequence[GateResult], scenario: Scenario) -> tuple[GateResult, ...]:
    return tuple(gate for gate in gates if counts_scenario(gate, scenario))


def counted(result: ScenarioResult, gates: Sequence[GateResult]) -> Status:
    """Under a floor: the scenario's status, at most as bad as the worst gate that counts it."""
    worst: Status = max((gate.status for gate in gates_over(gates, result.scenario)), key=SEVERITY.__getitem__, default="pass")
    return min(result.status, worst, key=SEVERITY.__getitem__)


def standing(report: Report, result: ScenarioResult) -> str | None:
    """How a scenario that did not pass stands when something other than its own verdict
    decides the run (a floor, ``--fail-on regression``); None when its verdict decides."""
    if result.status == "pass":
        return None
    word = "failed" if result.status == "fail" else "incomplete"
    if report.gates_on_regressions:
        now = report.counted(result)
        if now == result.status:
            return None
        if now == "pass":
            return f"{word}; not gating: --fail-on regression gates only what regressed against the baseline"
        return f"{word}; --fail-on regression counts it {now}"
    if not report.floor_decides:
        return None
    floor = any(gate.gate.startswith("min_pass_rate") for gate in report.gates)
    decides = "the suite floor decides the run" if floor else "the file's score decides the run (no floor set)"
    missed = [gate for gate in gates_over(report.gates, result.scenario) if gate.status != "pass"]
    if not missed:
        return f"{word}; {decides}, and the gates that count it passed: see gates"
    said = ", ".join(
        f"{'tag gate ' if gate.gate.startswith('tag[') else ''}{gate.gate} {'failed' if gate.status == 'fail' else 'is incomplete'}"
        for gate in missed
    )
    return f"{word}; {decides}: see gates; of the gates that count it, {said}"
