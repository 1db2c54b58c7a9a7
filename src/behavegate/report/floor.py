"""A scenario that did not pass, under a suite floor: which gates count it and what it
contributes to the run's verdict (report/standing.py words it for every view).

Under a floor (``gates.min_pass_rate``, ``--min-pass-rate``, an Oxy file's score)
single scenarios do not decide the run; the gates over them do. A scenario counts
as its own status when a gate that counts it did not pass (it is part of why the
run failed: a safety scenario under a failing ``by_tag`` gate), else as absorbed
by the floor.
"""

from __future__ import annotations

from collections.abc import Sequence

from behavegate.gating import GateKind
from behavegate.model import GateResult, Scenario, ScenarioResult, Status

SEVERITY: dict[str, int] = {"pass": 0, "incomplete": 1, "fail": 2}


def counts_scenario(gate: GateResult, scenario: Scenario) -> bool:
    """Whether ``gate`` is computed over the scenario (latency and shard gates are not)."""
    name = gate.name
    if name.kind in (GateKind.MIN_PASS_RATE, GateKind.SCORE, GateKind.MIN_SCORE):
        # threshold_mode: all names one gate per source file: min_pass_rate[<file>]
        return name.subject is None or name.subject == (scenario.source or "contract")
    if name.kind is GateKind.TAG:
        return name.subject in scenario.tags
    return False


def gates_over(gates: Sequence[GateResult], scenario: Scenario) -> tuple[GateResult, ...]:
    return tuple(gate for gate in gates if counts_scenario(gate, scenario))


def counted(result: ScenarioResult, gates: Sequence[GateResult]) -> Status:
    """Under a floor: the scenario's status, at most as bad as the worst gate that counts it."""
    worst: Status = max((gate.status for gate in gates_over(gates, result.scenario)), key=SEVERITY.__getitem__, default="pass")
    return min(result.status, worst, key=SEVERITY.__getitem__)
