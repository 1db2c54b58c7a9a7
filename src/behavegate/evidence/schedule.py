"""Which attempt a live worker sends next, when some scenarios stop early.

The command supplies the policy (commands/sequential_schedule.py); the live path
only asks it. ``wanted``: is this attempt still needed (False: never sent).
``room``: how many more attempts of its scenario could be in flight without
possibly sending one the decision will not need. A worker takes only a job with
room; when none has any, it waits for the next verdict (``WAIT``) rather than
send an attempt the decision may not need: attempts go out in order and never
past the fewest that could still decide, so a sequential scenario is sent
exactly the attempts its decision used, however the responses interleave."""

from __future__ import annotations

from typing import Any, Protocol


class Schedule(Protocol):
    def wanted(self, job: Any) -> bool: ...

    def room(self, job: Any) -> int: ...

    def started(self, job: Any) -> None: ...


WAIT = -1  # every job left must wait for a verdict still to come


def next_job(pending: list[int], jobs: list[Any], schedule: Schedule | None, in_flight: int = 0) -> int | None:
    """Remove and return the index of the job to send next (None: nothing left;
    ``WAIT``: nothing may be sent until one of the ``in_flight`` attempts is judged)."""
    if schedule is None:
        return pending.pop(0) if pending else None
    pending[:] = [index for index in pending if schedule.wanted(jobs[index])]
    if not pending:
        return None
    chosen = next((i for i in pending if schedule.room(jobs[i]) > 0), None)
    if chosen is None:
        if in_flight:
            return WAIT
        chosen = pending[0]  # nothing in flight can free room: never stall
    pending.remove(chosen)
    schedule.started(jobs[chosen])
    return chosen
