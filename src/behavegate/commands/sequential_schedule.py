"""The live schedule of sequential scenarios: an attempt is sent only while the
attempts judged so far (in attempt order, as the report will read them) leave
its scenario undecided, and no more are in flight than could be needed."""

from __future__ import annotations

import threading

from behavegate.evidence.live import Job
from behavegate.judge import sequential
from behavegate.model import Contract, Status


class SequentialSchedule:
    def __init__(self, contract: Contract, runs: int | None) -> None:
        self.designs = {
            s.id: sequential.design(s.min_pass_rate, s.sequential, runs or s.runs)
            for s in contract.scenarios
            if s.sequential is not None
        }
        self.statuses: dict[str, dict[int, Status]] = {key: {} for key in self.designs}
        self.in_flight: dict[str, int] = dict.fromkeys(self.designs, 0)
        self.lock = threading.Lock()

    def _prefix(self, key: str) -> list[Status]:
        found, prefix = self.statuses[key], list[Status]()
        while len(prefix) in found:
            prefix.append(found[len(prefix)])
        return prefix

    def wanted(self, job: Job) -> bool:
        key = job.scenario.id
        if key not in self.designs:
            return True
        with self.lock:
            return sequential.decide(self._prefix(key), self.designs[key]).by != "boundary"

    def room(self, job: Job) -> int:
        key = job.scenario.id
        if key not in self.designs:
            return 1
        with self.lock:
            prefix = self._prefix(key)
            waiting = self.in_flight[key] + len(self.statuses[key]) - len(prefix)
            return sequential.fewest_to_decide(prefix, self.designs[key]) - waiting

    def started(self, job: Job) -> None:
        if job.scenario.id in self.designs:
            with self.lock:
                self.in_flight[job.scenario.id] += 1

    def judged(self, job: Job, status: Status) -> None:
        """Called (on the judging thread) when an attempt's verdict is known."""
        key = job.scenario.id
        if key in self.designs:
            with self.lock:
                self.in_flight[key] -= 1
                self.statuses[key][job.attempt] = status
