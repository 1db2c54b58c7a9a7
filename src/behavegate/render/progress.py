"""Progress of a live run on stderr: one live line on a terminal, one line per
scenario in CI logs. Never shows agent output."""

from __future__ import annotations

import time

from behavegate.github.console import Console
from behavegate.judge.evaluate import evaluate_scenario
from behavegate.model import Observation, Scenario


class Progress:
    def __init__(self, total: int, console: Console, started: float, *, interactive: bool | None = None) -> None:
        self.total = total
        self.console = console
        self.started = started
        self.done = 0
        self.failing = 0
        self.incomplete = 0
        self.interactive = console.interactive if interactive is None else interactive

    def scenario_done(self, scenario: Scenario, observation: Observation) -> None:
        status = evaluate_scenario(scenario, observation).status
        self.done += 1
        self.failing += status == "fail"
        self.incomplete += status == "incomplete"
        elapsed = time.monotonic() - self.started
        if self.interactive:
            self.console.status_line(
                f"[{self.done}/{self.total}] {self.failing} failing, {self.incomplete} incomplete, {elapsed:.1f}s"
            )
        else:
            self.console.err(f"behavegate: [{self.done}/{self.total}] {scenario.id}: {status} ({elapsed:.1f}s)")

    def finish(self) -> None:
        if self.interactive and self.done:
            self.console.end_status_line()
