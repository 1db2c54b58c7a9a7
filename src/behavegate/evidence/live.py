"""The live path: ask a running agent, concurrently, and keep what it showed.

Every scenario is an independent request; at most ``concurrency`` are in
flight. A transport failure is recorded on that scenario (all its assertions
become incomplete) and the run goes on. Results come back in contract order.

What answers a request is pluggable (:data:`Send`): an HTTP endpoint here, an
in-process agent in ``evidence/in_process.py``. Both go through the same
conversation loop, budgets and normalization.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator, Callable, Mapping
from collections.abc import Set as AbstractSet
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from behavegate.evidence.budgets import AttemptBudget as AttemptBudget  # re-exported: the settings hold it
from behavegate.evidence.budgets import Spent, spend_limits
from behavegate.evidence.chat import (
    EndpointError,
    build_request,
    encode_request,
    normalize,
)
from behavegate.evidence.connections import Spares
from behavegate.evidence.conversation_loop import TurnMarks, conversation, turn_deadline
from behavegate.evidence.judge_client import JudgeSend, JudgeSettings
from behavegate.evidence.judging_thread import JudgingThread
from behavegate.evidence.schedule import WAIT, Schedule, next_job
from behavegate.evidence.settings import Connect as Connect  # re-exported: the in-process agent's
from behavegate.evidence.settings import LiveSettings as LiveSettings  # re-exported: commands build it
from behavegate.evidence.settings import Send as Send
from behavegate.evidence.transport import Client, Exchange, endpoint_target, new_client, post_chat
from behavegate.frozen import Frozen, replace
from behavegate.limits import MAX_RESPONSE_BYTES
from behavegate.model import Contract, Observation, Retry, Scenario, Timing

if TYPE_CHECKING:  # the MCP SDK (and its web server) is imported only by a run that serves tools
    from behavegate.evidence.mcp_server import AttemptTools, ToolServer

MCP_URL_HEADER = "X-Behavegate-MCP-URL"  # every request of an attempt carries its MCP URL here (agent.mcp)
OnDone = Callable[["Job", Observation, Timing], None]
Opened = Callable[["Job", Mapping[str, str]], AbstractAsyncContextManager[Send]]  # an attempt's connection, with its own headers


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def _observe(
    send: Send, contract: Contract, job: Job, settings: LiveSettings, spent: Spent, tools: AttemptTools | None = None
) -> tuple[Observation, Timing]:
    started_at, started = _stamp(), time.monotonic()
    # Version 2: an attempt the run's time budget cuts (never sent, or timed out in
    # flight) is incomplete with the reason; the attempts that finished keep their verdicts.
    if contract.version >= 2 and out_of_time(settings, started):
        return Observation(scenario_id=job.scenario.id, error=budget_reason(settings, None)), Timing(started_at, started_at, 0)
    # Any version: past the spend budget nothing more is sent; attempts in flight finish (up to concurrency - 1).
    if (spent_reason := spent.exhausted()) is not None:
        return Observation(scenario_id=job.scenario.id, error=spent_reason), Timing(started_at, started_at, 0)
    observation = await converse(send, contract, job.scenario, settings, tools.url if tools else None, tools)
    # Answers replayed from --cache took no time now: the attempt is timed as they took when recorded.
    replayed = settings.cache.tally(job.scenario.id, job.attempt).replayed_ms if settings.cache is not None else 0.0
    if tools is not None:  # the answer is in: what reaches the attempt's MCP path later is not its evidence
        from behavegate.evidence.mcp_server import tool_side

        tools.close()
        observation = tool_side(observation, tools)
    spent.add(observation)
    if contract.version >= 2 and observation.error is not None and out_of_time(settings, time.monotonic()):
        observation = replace(observation, error=budget_reason(settings, observation.error))
    duration = (time.monotonic() - started) * 1000 + replayed
    if contract.version >= 2 and observation.error is None:
        observation = replace(observation, latency_ms=round(duration, 3))
    return observation, Timing(started_at, _stamp(), int(duration))


def http_sender(
    client: Client,
    settings: LiveSettings,
    contract: Contract | None = None,
    extra: Mapping[str, str] | None = None,
    read: Callable[[], None] | None = None,
) -> Send:
    """Requests to the run's endpoint over ``client``. A version-2 contract's endpoint
    may answer with an event stream (asked for by ``agent.stream``, or sent unasked:
    known by its Content-Type); a version-1 answer is JSON, as skylos reads it.
    ``extra``: the attempt's own headers (its MCP URL); ``read``: called once an answer
    was read without error (--cache keeps it)."""
    url, headers = endpoint_target(settings.endpoint, settings.credentials)
    headers = {**headers, **(extra or {})}
    # A custom agent (agent.http) answers JSON only: a stream from it is not read as Chat Completions deltas.
    events = contract is not None and contract.version >= 2 and contract.agent.http is None
    if contract is not None and contract.agent.stream:
        headers = {**headers, "Accept": "text/event-stream"}

    async def send(pieces: tuple[bytes, ...], deadline: float, limit: int) -> tuple[Any, int]:
        # The raw body lives only in here: what outlives the request is the parsed response.
        answer = await post_chat(client, Exchange(url, pieces, headers, deadline, limit), events)
        if read is not None:
            read()
        return answer

    return send


@asynccontextmanager
async def http_connection(
    settings: LiveSettings,
    contract: Contract | None = None,
    spares: Spares | None = None,
    extra: Mapping[str, str] | None = None,
    job: Job | None = None,
) -> AsyncIterator[Send]:
    """One attempt's connection to the endpoint, closed when the attempt ends: HTTP/1.1 has
    no correlation, so an answer meant for one attempt (sent twice, or late) can never be
    read by another. The attempt's turns share it while it stays clean; it may come from
    ``spares``, opened ahead and never used (evidence/h11_transport.py). With ``--cache``
    (``settings.cache``), ``job``'s attempt index is part of every answer's key."""
    assert settings.endpoint is not None
    cache = settings.cache
    # No connection dialled ahead with a cache: a run answered from it needs no agent running.
    async with new_client(1, None if cache is not None else spares) as client:
        if cache is None:
            yield http_sender(client, settings, contract, extra)
            return
        from behavegate.evidence.answer_cache import CachedTransport  # --cache only

        attempt, scenario_id = (job.attempt, job.scenario.id) if job is not None else (0, "")
        cached = CachedTransport(client, cache, attempt, cache.tally(scenario_id, attempt))
        yield http_sender(cached, settings, contract, extra, read=cached.commit)


async def _ask(client: Client, contract: Contract, scenario: Scenario, settings: LiveSettings) -> Observation:
    return await converse(http_sender(client, settings, contract), contract, scenario, settings)


async def converse(
    send: Send,
    contract: Contract,
    scenario: Scenario,
    settings: LiveSettings,
    mcp_url: str | None = None,
    marks: TurnMarks | None = None,
) -> Observation:
    """One attempt. Version 1: one request. Version 2: while the agent calls tools
    the scenario scripts results for, send them back (never executing anything),
    up to ``max_turns`` requests, within the attempt's budget; ``mcp_url``: the
    attempt's own MCP URL (agent.mcp), placed in its requests; ``marks``: told which
    user turn is in flight (the MCP server ties calls to it)."""
    agent = contract.agent
    if contract.version < 2:
        payload = build_request(agent, scenario, settings.max_tokens)
        try:
            raw, _ = await send(encode_request(payload), turn_deadline(agent.timeout_seconds, settings), MAX_RESPONSE_BYTES)
            return normalize(raw, scenario.id, agent.missing_tool_calls)
        except EndpointError as error:
            return Observation(scenario_id=scenario.id, error=str(error))
    retried: list[Retry] = []
    observation = await conversation(send, contract, scenario, settings, retried, mcp_url, marks)
    return replace(observation, retries=tuple(retried)) if retried else observation


def out_of_time(settings: LiveSettings, now: float) -> bool:
    return now - settings.started >= settings.max_seconds


def budget_reason(settings: LiveSettings, in_flight: str | None) -> str:
    """Why an attempt has no verdict when the run's budget ran out, and the fix."""
    what = "cut in flight" if in_flight else "not sent"
    return (
        f"{what}: the run's time budget (--max-seconds {settings.max_seconds:g}) ran out; "
        "raise --max-seconds, or --concurrency to run more attempts at once"
    )


class Job(Frozen):
    scenario: Scenario
    attempt: int


def jobs(contract: Contract, runs: int | None = None, only: AbstractSet[tuple[str, int]] | None = None) -> list[Job]:
    """Every attempt to make: one per scenario (version 1), ``runs`` per scenario (version 2);
    ``only``: just these (scenario id, attempt) pairs (a shard's)."""
    if contract.version < 2:
        every = [Job(s, 0) for s in contract.scenarios]
    else:
        every = [Job(s, attempt) for s in contract.scenarios for attempt in range(runs or s.runs)]
    return every if only is None else [job for job in every if (job.scenario.id, job.attempt) in only]


async def observe_all(
    contract: Contract,
    settings: LiveSettings,
    on_done: OnDone | None = None,
    runs: int | None = None,
    only: AbstractSet[tuple[str, int]] | None = None,
    connect: Connect | None = None,
    schedule: Schedule | None = None,
) -> list[tuple[Job, Observation, Timing]]:
    """``concurrency`` workers take attempts (each on connections of its own) in
    order; results come back in contract order whatever finishes first.

    ``on_done`` (the command judges each attempt as it completes: safety scans, regexes, schemas)
    runs on one thread of its own (evidence/judging_thread.py), never on the event loop:
    CPU work there would hold up every response in flight. The calls run in completion order.

    ``schedule`` (sequential scenarios): attempts are taken round the scenarios, a
    worker waits for its attempt's verdict before taking the next, and attempts
    the schedule no longer wants are never sent (evidence/schedule.py)."""
    todo = jobs(contract, runs, only)
    results: list[tuple[Job, Observation, Timing] | None] = [None] * len(todo)
    pending = list(range(len(todo)))
    if schedule is not None:  # attempt 1 of every scenario, then attempt 2, ...
        pending.sort(key=lambda index: todo[index].attempt)
    spares = Spares(settings.concurrency)  # one ready for each worker's next attempt
    opened: Opened = (
        (lambda job, extra: connect())
        if connect
        else (lambda job, extra: http_connection(settings, contract, spares, extra, job))
    )
    asked = any(job.scenario.expect.judge is not None or job.scenario.simulated_user is not None for job in todo)
    judge = settings.judge if asked else None

    async with AsyncExitStack() as stack:
        stack.push_async_callback(spares.aclose)
        ask_judge: JudgeSend | None = None
        if judge is not None and judge.endpoint is not None:
            from behavegate.evidence.judge_client import http_judge

            # No connection kept: a judge's answer to one question is never read as another's.
            client = await stack.enter_async_context(new_client(0))
            ask_judge = http_judge(client, judge)
            if any(job.scenario.simulated_user is not None for job in todo):
                from behavegate.evidence.simulated_user import simulator

                settings = replace(settings, simulate=simulator(ask_judge, judge, settings.started + settings.max_seconds))
        served = await _serve_tools(stack, contract, settings) if connect is None else None
        await _work(contract, settings, todo, results, pending, opened, on_done, schedule, judge, ask_judge, served)
    return [r for r in results if r is not None]


async def _serve_tools(stack: AsyncExitStack, contract: Contract, settings: LiveSettings) -> ToolServer | str | None:
    """The run's MCP tool server (agent.mcp.serve), stopped with the run; the reason when it
    could not start (every attempt is then incomplete with it, never "no call")."""
    if contract.version < 2 or not contract.agent.serve_mcp or settings.mcp_listen is None:
        return None
    from behavegate.evidence.mcp_server import ToolServer

    try:
        return await stack.enter_async_context(ToolServer(contract.agent, settings.mcp_listen, settings.mcp_port).running())
    except OSError as error:
        where = settings.mcp_listen + (f" port {settings.mcp_port}" if settings.mcp_port else "")
        return f"the MCP tool server could not be started on {where}: {error.strerror or error}"


def one_at_a_time(contract: Contract) -> bool:
    """An agent configured once with one MCP URL (agent.mcp.url: fixed): its attempts cannot
    share that URL, so they run one at a time and each holds it while it runs."""
    return contract.version >= 2 and contract.agent.serve_mcp and contract.agent.mcp_fixed_url


@asynccontextmanager
async def _attempt_tools(served: ToolServer | str | None, scenario: Scenario) -> AsyncIterator[AttemptTools | str | None]:
    if served is None or isinstance(served, str):
        yield served
        return
    async with served.attempt(scenario) as tools:
        yield tools


async def _work(
    contract: Contract,
    settings: LiveSettings,
    todo: list[Job],
    results: list[tuple[Job, Observation, Timing] | None],
    pending: list[int],
    opened: Opened,
    on_done: OnDone | None,
    schedule: Schedule | None,
    judge: JudgeSettings | None,
    ask_judge: JudgeSend | None,
    served: ToolServer | str | None = None,
) -> None:
    from behavegate.evidence.judge_client import judged

    verdict = asyncio.Event()  # set (and replaced) whenever a scheduled attempt is judged
    sending = 0
    tally = Spent(settings.spend)  # the whole run's spend, against settings.spend

    judging = JudgingThread()
    try:

        async def worker() -> None:
            nonlocal verdict, sending
            while (index := next_job(pending, todo, schedule, sending)) is not None:
                if index == WAIT:
                    await verdict.wait()
                    continue
                job = todo[index]
                sending += 1
                try:
                    async with _attempt_tools(served, job.scenario) as tools:
                        if isinstance(tools, str):  # the MCP tool server is not running: no evidence of calls
                            stamp = _stamp()
                            observation, timing = Observation(scenario_id=job.scenario.id, error=tools), Timing(stamp, stamp, 0)
                        else:
                            extra = {MCP_URL_HEADER: tools.url} if tools is not None else {}
                            async with opened(job, extra) as send:  # each attempt on connections of its own
                                observation, timing = await _observe(send, contract, job, settings, tally, tools)
                    if judge is not None and ask_judge is not None:
                        # One more evidence step, inside the run's time budget.
                        deadline = settings.started + settings.max_seconds
                        asking = time.monotonic()
                        observation = await judged(ask_judge, judge, job.scenario, observation, deadline)
                        if observation.judge is not None:  # the attempt's evidence took this long too
                            spent = int((time.monotonic() - asking) * 1000)
                            timing = Timing(timing.started_at, _stamp(), timing.duration_ms + spent)
                    if on_done is not None and schedule is not None:
                        await judging.run(on_done, job, observation, timing)  # its verdict decides what is sent next
                    elif on_done is not None:
                        judging.submit(on_done, job, observation, timing)
                finally:
                    sending -= 1
                    if schedule is not None:  # a verdict (or an error) may free room
                        verdict.set()
                        verdict = asyncio.Event()
                results[index] = (job, observation, timing)

        workers = 1 if one_at_a_time(contract) else settings.concurrency
        await asyncio.gather(*(worker() for _ in range(min(workers, len(todo)) or 1)))
        await judging.finish()
    finally:
        judging.stop()


def observe(
    contract: Contract,
    settings: LiveSettings,
    on_done: OnDone | None = None,
    runs: int | None = None,
    only: AbstractSet[tuple[str, int]] | None = None,
    connect: Connect | None = None,
    schedule: Schedule | None = None,
) -> list[tuple[Job, Observation, Timing]]:
    """Every attempt observed (see :func:`observe_all`); ``connect``: what answers (default: the endpoint)."""
    # Everything imported so far lives for the whole run: keep the collector from
    # rescanning it on every generation-2 pass while responses stream in.
    gc.freeze()
    try:
        return asyncio.run(observe_all(contract, settings, on_done, runs, only, connect, schedule))
    finally:
        gc.unfreeze()


def provenance(settings: LiveSettings, max_scenarios: int, timeout_seconds: float) -> dict[str, object]:
    assert settings.endpoint is not None
    return {
        "kind": "runtime_endpoint",
        "trust": "runtime_observed",
        "endpoint_source": settings.endpoint.source,
        "endpoint_fingerprint": settings.endpoint.fingerprint,
        "authenticated": settings.credentials is not None,
        "contract_endpoint_consent": settings.endpoint.consent,
        "request_limits": {
            "max_scenarios": max_scenarios,
            "max_seconds": settings.max_seconds,
            "max_tokens": settings.max_tokens,
            "timeout_seconds": timeout_seconds,
            "max_response_bytes": MAX_RESPONSE_BYTES,
            **spend_limits(settings.spend),
        },
        "source_digest": None,
        **judge_provenance(settings),
        **mcp_provenance(settings),
    }


def mcp_provenance(settings: LiveSettings) -> dict[str, object]:
    """Where the MCP tool server listened (agent.mcp), and its bounds; only when there was one."""
    from behavegate import limits

    if settings.mcp_listen is None:
        return {}
    bounds = (
        "MCP_MAX_CALLS",
        "MCP_MAX_REQUESTS",
        "MCP_MAX_REQUEST_BYTES",
        "MCP_MAX_CONNECTIONS",
        "MCP_REQUEST_SECONDS",
        "MCP_HEADER_SECONDS",
    )
    return {
        "mcp_tool_server": {
            "listen": settings.mcp_listen,
            "port": settings.mcp_port or "ephemeral",
            "transport": "streamable-http",
            "paths": "one fixed path, /mcp, attempts one at a time" if settings.mcp_fixed else "one unguessable path per attempt",
            "limits": {name.removeprefix("MCP_").lower(): getattr(limits, name) for name in bounds},
        }
    }


def judge_provenance(settings: LiveSettings) -> dict[str, object]:
    """The judge the run asked (model, endpoint fingerprint, budgets, requests sent); only
    when there was one, so reports of runs without a judge keep their shape."""
    return {} if settings.judge is None else {"judge": settings.judge.provenance()}
