"""Where each finished attempt is judged during a live run: one thread of its own.

Why a thread: judging (safety scans, regexes, schemas) is CPU work; on the event loop
it would hold up every response in flight. Why this one rather than an executor: an
executor's future wakes the event loop once per attempt (a thread hand-off and a
self-pipe write each time), which cost a third of a loopback attempt's CPU. Here an
attempt is handed over with one queue put and nothing comes back to the loop, except
when a verdict is awaited (a sequential schedule's) and at the end. Calls run one at a
time, in the order attempts finished.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import ParamSpec

P = ParamSpec("P")
_Item = tuple[Callable[[], None] | None, "Future[None] | None"]  # None: the end of the queue


class JudgingThread:
    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="behavegate-judge", daemon=True)
        self._thread.start()

    def submit(self, call: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
        """Run ``call(*args)`` after everything submitted before; nothing waits for it."""
        self._queue.put((partial(call, *args, **kwargs), None))

    async def run(self, call: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
        """Run ``call(*args)`` after everything submitted before, and wait for it."""
        done: Future[None] = Future()
        self._queue.put((partial(call, *args, **kwargs), done))
        await asyncio.wrap_future(done)

    async def finish(self) -> None:
        """Wait until every call has run; raise the first error any of them raised."""
        done: Future[None] = Future()
        self._queue.put((None, done))
        await asyncio.wrap_future(done)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """Let the thread end once what is queued has run (a run cut short); idempotent."""
        if self._thread.is_alive():
            self._queue.put((None, None))

    def _run(self) -> None:
        while True:
            call, done = self._queue.get()
            if done is not None and not done.set_running_or_notify_cancel():
                continue  # its waiter was cancelled (the run was): nothing waits for it
            if call is None:
                if done is not None:
                    done.set_result(None)
                return
            error: BaseException | None = None
            if self._error is None:  # after a failure the rest is not judged: the run fails with it
                try:
                    call()
                except BaseException as exc:  # handed to the loop: raised by finish()
                    error = self._error = exc
            if done is not None:
                if error is not None:
                    done.set_exception(error)
                else:
                    done.set_result(None)
