"""Possible loops: attempts that ran out of ``max_turns`` while still calling tools
(version 2). Derived once when the Report is built (report/derived.py), for every view (table, summary,
HTML, JUnit, SARIF): a loop is a note, never a verdict, so a scenario whose checks
pass can still have one, and no view may hide it.
"""

from __future__ import annotations

from behavegate.frozen import Frozen
from behavegate.model import Observation

LABEL = "possible loop: "


class PossibleLoop(Frozen):
    """One attempt that may be a loop; ``why`` is the reason without its label, with
    the repeated calls (values a failing ``safety.pii`` check found masked)."""

    scenario: str
    attempt: int  # from 1
    why: str


def attempt_loop(scenario: str, index: int, shown: Observation | None) -> PossibleLoop | None:
    """The possible loop of one attempt (``index`` from 0), from the observation as views
    show it (flagged values masked), or None."""
    from behavegate.judge.gaps import possible_loop

    why = possible_loop(shown)
    return None if why is None else PossibleLoop(scenario, index + 1, why.removeprefix(LABEL))


def loops_line(loops: tuple[PossibleLoop, ...], attempts: int) -> str:
    """One line for a scenario's loops: which attempts, and the first one's reason."""
    numbers = ", ".join(str(loop.attempt) for loop in loops)
    which = f"attempt {numbers}" if len(loops) == 1 else f"attempts {numbers}"
    return f"possible loop in {which} of {attempts}: {loops[0].why}"
