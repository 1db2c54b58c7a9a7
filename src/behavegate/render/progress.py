"""Progress of a live run on stderr: one live line on a terminal, one line per
attempt in CI logs. It shows the verdict it is given (judged once, by the
command) and never agent output."""

from __future__ import annotations

import time
from typing import Protocol


class Console(Protocol):
    """The part of the output boundary (``behavegate.github.console``) progress uses."""

    @property
    def interactive(self) -> bool: ...

    def err(self, text: str) -> None: ...

    def status_line(self, text: str) -> None: ...

    def end_status_line(self) -> None: ...


class Progress:
    def __init__(self, total: int, console: Console, started: float, *, interactive: bool | None = None) -> None:
        self.total = total
        self.console = console
        self.started = started
        self.done = 0
        self.failing = 0
        self.incomplete = 0
        self.interactive = console.interactive if interactive is None else interactive

    def attempt_done(self, scenario_id: str, status: str, seconds: float) -> None:
        """``seconds``: how long this attempt took (the terminal line shows the run's elapsed time)."""
        self.done += 1
        self.failing += status == "fail"
        self.incomplete += status == "incomplete"
        if self.interactive:
            elapsed = time.monotonic() - self.started
            self.console.status_line(
                f"[{self.done}/{self.total}] {self.failing} failing, {self.incomplete} incomplete, {elapsed:.1f}s elapsed"
            )
        else:
            self.console.err(f"behavegate: [{self.done}/{self.total}] {scenario_id}: {status} in {seconds:.1f}s")

    def finish(self) -> None:
        if self.interactive and self.done:
            self.console.end_status_line()
