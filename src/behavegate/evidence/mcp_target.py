"""An MCP server as the target (``agent.api: mcp``, version 2): each attempt of a scenario
makes its one ``call: {tool, arguments}`` on the server, over Streamable HTTP with the
official ``mcp`` SDK's client, on a session of its own, and the result is the evidence.

The result's text content is the response (``response.*`` checks read it); the call is the
attempt's one executed tool call, so ``tools.*`` checks read it too; a result with ``isError``,
or a JSON-RPC error for the call, is a failed call (``tools.no_errors``) whose error text is
kept. A transport failure or a timeout leaves the attempt incomplete with the reason, and the
run goes on."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime
from typing import Any

from behavegate.evidence.live import Connect, Job, LiveSettings, OnDone, jobs
from behavegate.evidence.schedule import Schedule
from behavegate.limits import ATTEMPT_MAX_RESPONSE_BYTES, MAX_RESPONSE_BYTES
from behavegate.model import Contract, Observation, Timing, ToolCall
from behavegate.text import one_line


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def observe(
    contract: Contract,
    settings: LiveSettings,
    on_done: OnDone | None = None,
    runs: int | None = None,
    only: AbstractSet[tuple[str, int]] | None = None,
    connect: Connect | None = None,
    schedule: Schedule | None = None,
) -> list[tuple[Job, Observation, Timing]]:
    """Every attempt's call, ``concurrency`` at a time, in contract order (live.observe's shape;
    ``connect`` and ``schedule`` do not apply: every attempt is one call)."""
    return asyncio.run(_observe_all(contract, settings, on_done, jobs(contract, runs, only)))


async def _observe_all(
    contract: Contract, settings: LiveSettings, on_done: OnDone | None, todo: list[Job]
) -> list[tuple[Job, Observation, Timing]]:
    room = asyncio.Semaphore(max(1, settings.concurrency))

    async def one(job: Job) -> tuple[Job, Observation, Timing]:
        async with room:
            started_at, started = _stamp(), time.monotonic()
            if time.monotonic() - settings.started >= settings.max_seconds:
                why = f"not sent: the run's time budget (--max-seconds {settings.max_seconds:g}) ran out"
                observation = Observation(scenario_id=job.scenario.id, error=why)
            else:
                observation = await called(contract, settings, job)
            duration = (time.monotonic() - started) * 1000
            if observation.error is None:
                observation = _with_latency(observation, round(duration, 3))
            timing = Timing(started_at, _stamp(), int(duration))
            if on_done is not None:
                on_done(job, observation, timing)
            return job, observation, timing

    return list(await asyncio.gather(*(one(job) for job in todo)))


def _with_latency(observation: Observation, latency_ms: float) -> Observation:
    from behavegate.frozen import replace

    return replace(observation, latency_ms=latency_ms)


async def called(contract: Contract, settings: LiveSettings, job: Job) -> Observation:
    """One attempt: the scenario's call on a fresh session, within agent.timeout_seconds."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    from behavegate.evidence.mcp_client import bounded_client

    scenario, endpoint = job.scenario, settings.endpoint
    assert scenario.call is not None and endpoint is not None  # the loader requires call with agent.api: mcp
    name, arguments = scenario.call.name, dict(scenario.call.arguments or {})
    url = endpoint.connect_url or endpoint.url
    # No proxy settings read (trust_env); for an allow-listed host, its pinned address is dialled.
    headers = {"Host": endpoint.host_header} if endpoint.host_header else {}
    if settings.credentials is not None:
        headers["Authorization"] = f"Bearer {settings.credentials.token}"
    call = ToolCall(name, arguments, "mcp_0", executed=True)
    seconds = contract.agent.timeout_seconds
    try:
        async with (
            bounded_client(seconds, headers, ATTEMPT_MAX_RESPONSE_BYTES) as http,
            asyncio.timeout(seconds),
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            try:
                result = await client.call_tool(name, arguments)
            except MCPError as refused:  # the server answered the call with an error: a failed call
                error = one_line(f"JSON-RPC error {refused.code}: {refused.message}", 2000)
                return _observation(scenario.id, call, None, error)
    except Exception as failed:  # transport, protocol or time: not evidence of the call's outcome
        return Observation(scenario_id=scenario.id, error=f"MCP call {name} failed: {_reason(failed, seconds)}")
    text = "\n".join(part.text for part in result.content if getattr(part, "type", None) == "text")  # type: ignore[union-attr]
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RESPONSE_BYTES:
        return Observation(scenario_id=scenario.id, error=f"the result of {name} is larger than {MAX_RESPONSE_BYTES:,} bytes")
    observation = _observation(scenario.id, call, text, text if result.is_error else None)
    kinds = {str(getattr(part, "type", "unknown")) for part in result.content}
    other = sorted(kinds - {"text"})
    if other or ("text" not in kinds and result.structured_content is not None):
        # An image, a blob, an embedded resource, or structured content with no text beside it:
        # what it says is not read, so it is never "not said".
        from behavegate.frozen import replace

        what = ", ".join(other)[:200] if other else "structured content"
        gap = f"the result of {name} holds content that is not text ({what}): the response is not all known"
        observation = replace(observation, response_gap=gap)
    return observation


def _observation(scenario_id: str, call: ToolCall, text: str | None, error: str | None) -> Observation:
    return Observation(
        scenario_id=scenario_id,
        response=text,
        response_complete=text is not None,
        finish_reason="stop",
        tool_calls=(call,),
        tool_calls_complete=True,
        tool_errors=(error,),
    )


def _reason(error: BaseException, seconds: float) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, TimeoutError):
        return f"no result within agent.timeout_seconds ({seconds:g} s)"
    return one_line(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__, 500)


def provenance() -> dict[str, Any]:
    """What kind of target the run called (beside the endpoint's own provenance)."""
    return {"mcp_target": {"transport": "streamable-http", "calls": "one tools/call per attempt, a session each"}}
