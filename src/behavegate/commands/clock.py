"""The run's clock (its id, start and elapsed time: the only clock reads of a
run) and how attempt timings add up per scenario."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from behavegate.model import Contract, RunFacts, Timing


class Clock:
    """The run's id and wall clock (the only clock reads of a run)."""

    def __init__(self) -> None:
        self.started = datetime.now(UTC)
        self.monotonic = time.monotonic()
        self.run_id = f"{self.started.strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(4).hex()}"

    def elapsed(self) -> float:
        return time.monotonic() - self.monotonic

    @staticmethod
    def stamp(moment: datetime) -> str:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def facts(self, max_scenarios: int, max_seconds: float) -> RunFacts:
        return RunFacts(
            run_id=self.run_id,
            started_at=self.stamp(self.started),
            ended_at=self.stamp(datetime.now(UTC)),
            duration_ms=int(self.elapsed() * 1000),
            max_scenarios=max_scenarios,
            max_seconds=float(max_seconds),
        )


def scenario_timings(contract: Contract, spans: dict[str, list[Timing]]) -> tuple[Timing, ...]:
    """One timing per scenario (its attempts span from the first start to the last end)."""
    out = []
    for scenario in contract.scenarios:
        timings = spans.get(scenario.id) or [Timing("", "", 0)]
        out.append(
            Timing(min(t.started_at for t in timings), max(t.ended_at for t in timings), sum(t.duration_ms for t in timings))
        )
    return tuple(out)
