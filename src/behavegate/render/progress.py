"""Progress of a live run on stderr: one live line on a terminal; in CI logs a line
per attempt, and past the first PROGRESS_LINES_LISTED only for an attempt that did
not pass plus a count every tenth of the run (10,000 lines of "pass" would bury the
failures). It shows the verdict it is given (judged once, by the command) and never
agent output."""

from __future__ import annotations

import time
from typing import Protocol

from behavegate.limits import TABLE_ROWS_LISTED as PROGRESS_LINES_LISTED


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
        elif self.done <= PROGRESS_LINES_LISTED or status != "pass":
            self.console.err(f"behavegate: [{self.done}/{self.total}] {scenario_id}: {status} in {seconds:.1f}s")
        elif self.done % max(1, self.total // 10) == 0 or self.done == self.total:
            elapsed = time.monotonic() - self.started
            self.console.err(
                f"behavegate: [{self.done}/{self.total}] {self.failing} failing, {self.incomplete} incomplete, "
                f"{elapsed:.1f}s elapsed (passing attempts past the first {PROGRESS_LINES_LISTED} are counted, not listed)"
            )

    def finish(self) -> None:
        if self.interactive and self.done:
            self.console.end_status_line()
