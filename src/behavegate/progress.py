"""Progress of a live run on stderr: one live line on a terminal, one line per
scenario in CI logs. Never shows agent output."""

from __future__ import annotations

import os
import time
from typing import TextIO

from .evaluate import evaluate_scenario
from .model import Observation, Scenario


class Progress:
    def __init__(self, total: int, stream: TextIO, started: float, *, interactive: bool | None = None) -> None:
        self.total = total
        self.stream = stream
        self.started = started
        self.done = 0
        self.failing = 0
        self.incomplete = 0
        if interactive is None:
            interactive = stream.isatty() and os.environ.get("CI", "").lower() not in {"true", "1"}
        self.interactive = interactive

    def scenario_done(self, scenario: Scenario, observation: Observation) -> None:
        status = evaluate_scenario(scenario, observation).status
        self.done += 1
        self.failing += status == "fail"
        self.incomplete += status == "incomplete"
        elapsed = time.monotonic() - self.started
        if self.interactive:
            self.stream.write(
                f"\r\x1b[2K[{self.done}/{self.total}] {self.failing} failing, {self.incomplete} incomplete, {elapsed:.1f}s"
            )
        else:
            # Scenario ids are restricted to [A-Za-z0-9._-]: safe to print as they are.
            self.stream.write(f"behavegate: [{self.done}/{self.total}] {scenario.id}: {status} ({elapsed:.1f}s)\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.interactive and self.done:
            self.stream.write("\n")
            self.stream.flush()
