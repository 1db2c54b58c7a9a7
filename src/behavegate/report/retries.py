"""Retried attempts (``--retries``, version 2): attempts whose evidence needed a request
sent again. Computed here once, from the Report, for the table and the job summary: a
retry is a note, never a verdict, so an attempt that passed after retries still says so.
"""

from __future__ import annotations

from behavegate.frozen import Frozen
from behavegate.report.result import Report

RETRIES_SHOWN = 10  # attempts listed in a view; the JSON report has every retry


class RetriedAttempt(Frozen):
    scenario: str
    attempt: int  # from 1
    status: str  # the attempt's verdict
    reasons: tuple[str, ...]  # one per retry, in order ("HTTP 429", "connection reset")

    def line(self) -> str:
        count = len(self.reasons)
        made = f"{count} retry" if count == 1 else f"{count} retries"
        verb = {"pass": "passed", "fail": "failed"}.get(self.status, "was incomplete")
        shown = ", ".join(self.reasons[:5]) + (", ..." if count > 5 else "")
        return f"{self.scenario}: attempt {self.attempt} {verb} after {made} ({shown})"


def retried_attempts(report: Report) -> tuple[RetriedAttempt, ...]:
    """Every attempt that was retried, scenario by scenario, in attempt order."""
    return tuple(
        RetriedAttempt(
            result.scenario.id, attempt.index + 1, attempt.status, tuple(r.reason for r in attempt.observation.retries)
        )
        for result in report.results
        for attempt in result.attempts
        if attempt.observation is not None and attempt.observation.retries
    )
