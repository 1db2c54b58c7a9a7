"""Opt-in retries (``--retries N``, version 2): a request that met HTTP 429, 502, 503,
504 or a connection reset before any answer is sent again, up to N times, after an
exponential backoff or the server's ``Retry-After``, and only while the wait and the
retry still fit in the request's deadline (itself inside the run's ``--max-seconds``).
Every retry is recorded on the attempt's evidence. Anything else (HTTP 400, 500, a
deadline, a malformed answer) is never retried: it is the agent's behaviour.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from behavegate.evidence.chat import EndpointError
from behavegate.evidence.transport import Retryable
from behavegate.frozen import Frozen
from behavegate.limits import RETRY_FIRST_WAIT, RETRY_MAX_WAIT
from behavegate.model import Retry

Ask = Callable[[tuple[bytes, ...], float, int], Awaitable[tuple[Any, int]]]  # live.Send


class RetryPolicy(Frozen):
    retries: int = 0  # 0: never (the default, and version 1 always)
    first_wait: float = RETRY_FIRST_WAIT
    max_wait: float = RETRY_MAX_WAIT


def backoff(policy: RetryPolicy, retry: int, retry_after: float | None) -> float:
    """Seconds to wait before retry number ``retry`` (from 1): the server's Retry-After
    when it sent one (never sooner), else first_wait doubled each time, at most max_wait."""
    if retry_after is not None:
        return retry_after
    return min(policy.max_wait, policy.first_wait * 2.0 ** (retry - 1))


def retrying(
    send: Ask,
    policy: RetryPolicy,
    turn: int,
    log: list[Retry],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Ask:
    """``send`` with the policy applied; each retry made is appended to ``log``."""
    if policy.retries <= 0:
        return send

    async def ask(pieces: tuple[bytes, ...], deadline: float, limit: int) -> tuple[Any, int]:
        made = 0
        while True:
            try:
                return await send(pieces, deadline, limit)
            except Retryable as error:
                if made >= policy.retries:
                    raise EndpointError(f"{error} after {_retries(made)}") from None
                wait = backoff(policy, made + 1, error.retry_after)
                if clock() + wait >= deadline:
                    raise EndpointError(
                        f"{error}; not retried: waiting {wait:.3g} s would pass the request deadline"
                        + (f" (after {_retries(made)})" if made else "")
                    ) from None
                await sleep(wait)
                made += 1
                log.append(Retry(turn, error.reason, round(wait * 1000)))

    return ask


def _retries(count: int) -> str:
    return f"{count} retry" if count == 1 else f"{count} retries"
