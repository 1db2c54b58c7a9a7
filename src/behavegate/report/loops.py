"""Possible loops: attempts that ran out of ``max_turns`` while still calling tools
(version 2). Computed here once, from the Report, for every view (table, summary,
HTML, JUnit, SARIF): a loop is a note, never a verdict, so a scenario whose checks
pass can still have one, and no view may hide it.
"""

from __future__ import annotations

from behavegate.frozen import frozen
from behavegate.model import ScenarioResult
from behavegate.report.redact import masked_observation
from behavegate.report.result import Report

LABEL = "possible loop: "


@frozen
class PossibleLoop:
    """One attempt that may be a loop; ``why`` is the reason without its label, with
    the repeated calls (values a failing ``safety.pii`` check found masked)."""

    scenario: str
    attempt: int  # from 1
    why: str


def scenario_loops(result: ScenarioResult) -> tuple[PossibleLoop, ...]:
    """The possible loops of one scenario's attempts, in attempt order."""
    from behavegate.judge.gaps import possible_loop

    found = []
    for attempt in result.attempts:
        why = possible_loop(masked_observation(result.scenario, attempt.observation, attempt.verdicts))
        if why is not None:
            found.append(PossibleLoop(result.scenario.id, attempt.index + 1, why.removeprefix(LABEL)))
    return tuple(found)


def possible_loops(report: Report) -> tuple[PossibleLoop, ...]:
    """Every possible loop of the run, scenario by scenario."""
    return tuple(loop for result in report.results for loop in scenario_loops(result))


def loops_line(loops: tuple[PossibleLoop, ...], attempts: int) -> str:
    """One line for a scenario's loops: which attempts, and the first one's reason."""
    numbers = ", ".join(str(loop.attempt) for loop in loops)
    which = f"attempt {numbers}" if len(loops) == 1 else f"attempts {numbers}"
    return f"possible loop in {which} of {attempts}: {loops[0].why}"
