"""How every view words a scenario that did not pass when something other than its own
verdict decides the run (a suite floor, ``--fail-on regression``). Never "pass": a
failed scenario is called failed, and the gates that decide are named."""

from __future__ import annotations

from behavegate.gating import GateKind
from behavegate.model import ScenarioResult
from behavegate.report.floor import gates_over
from behavegate.report.result import Report


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
    floor = any(gate.name.kind is GateKind.MIN_PASS_RATE for gate in report.gates)
    decides = "the suite floor decides the run" if floor else "the file's score decides the run (no floor set)"
    missed = [gate for gate in gates_over(report.gates, result.scenario) if gate.status != "pass"]
    if not missed:
        return f"{word}; {decides}, and the gates that count it passed: see gates"
    said = ", ".join(
        f"{'tag gate ' if gate.name.kind is GateKind.TAG else ''}{gate.gate} {'failed' if gate.status == 'fail' else 'is incomplete'}"
        for gate in missed
    )
    return f"{word}; {decides}: see gates; of the gates that count it, {said}"
