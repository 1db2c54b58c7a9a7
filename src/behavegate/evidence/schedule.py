"""Which attempt a live worker sends next, when some scenarios stop early.

The command supplies the policy (commands/sequential_schedule.py); the live path
only asks it. ``wanted``: is this attempt still needed (False: never sent).
``room``: how many more attempts of its scenario could be in flight without
possibly sending one the decision will not need; workers prefer jobs with room,
and take one without only to keep every worker busy."""

from __future__ import annotations

from typing import Any, Protocol


class Schedule(Protocol):
    def wanted(self, job: Any) -> bool: ...

    def room(self, job: Any) -> int: ...

    def started(self, job: Any) -> None: ...


def next_job(pending: list[int], jobs: list[Any], schedule: Schedule | None) -> int | None:
    """Remove and return the index of the job to send next (None: nothing left)."""
    if schedule is None:
        return pending.pop(0) if pending else None
    pending[:] = [index for index in pending if schedule.wanted(jobs[index])]
    if not pending:
        return None
    chosen = next((i for i in pending if schedule.room(jobs[i]) > 0), pending[0])
    pending.remove(chosen)
    schedule.started(jobs[chosen])
    return chosen
