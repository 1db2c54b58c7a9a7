"""The live run's judging thread: calls run in order, off the event loop, and a failure reaches the run."""

from __future__ import annotations

import asyncio
import threading

import pytest

from behavegate.evidence.judging_thread import JudgingThread


def test_calls_run_in_submission_order_on_another_thread_and_finish_waits_for_all() -> None:
    seen: list[tuple[int, str]] = []

    async def main() -> None:
        judging = JudgingThread()
        for index in range(50):
            judging.submit(lambda i: seen.append((i, threading.current_thread().name)), index)
        await judging.finish()

    asyncio.run(main())
    assert [index for index, _ in seen] == list(range(50))
    assert {name for _, name in seen} == {"behavegate-judge"}


def test_an_awaited_call_runs_after_the_ones_submitted_before_it() -> None:
    seen: list[str] = []

    async def main() -> None:
        judging = JudgingThread()
        judging.submit(seen.append, "first")
        await judging.run(seen.append, "awaited")
        assert seen == ["first", "awaited"]  # done before run() returned
        await judging.finish()

    asyncio.run(main())


def test_a_failing_call_fails_the_run_and_the_rest_is_not_judged() -> None:
    seen: list[int] = []

    def judge(index: int) -> None:
        if index == 3:
            raise ValueError("judging attempt 3 failed")
        seen.append(index)

    async def main() -> None:
        judging = JudgingThread()
        for index in range(6):
            judging.submit(judge, index)
        await judging.finish()

    with pytest.raises(ValueError, match="attempt 3"):
        asyncio.run(main())
    assert seen == [0, 1, 2]


def test_an_awaited_call_that_fails_raises_where_it_is_awaited() -> None:
    def judge() -> None:
        raise ZeroDivisionError

    async def main() -> None:
        judging = JudgingThread()
        try:
            await judging.run(judge)
        finally:
            judging.stop()

    with pytest.raises(ZeroDivisionError):
        asyncio.run(main())


def test_stop_lets_the_thread_end_when_a_run_is_cut_short() -> None:
    judging = JudgingThread()
    judging.submit(lambda: None)
    judging.stop()
    judging._thread.join(timeout=5)
    assert not judging._thread.is_alive()
