"""The live path: ask a running agent, concurrently, and keep what it showed.

Every scenario is an independent request; at most ``concurrency`` are in
flight. A transport failure is recorded on that scenario (all its assertions
become incomplete) and the run goes on. Results come back in contract order.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import httpx

from . import __version__
from .artifacts import Timing
from .chat import EndpointError, assistant_turn, build_request, first_messages, normalize, parse_body
from .evaluate import evaluate
from .model import Contract, Observation, Scenario, ToolCall
from .options import RunOptions
from .record import record, replace
from .report import RunFacts, build_report
from .transport import MAX_RESPONSE_BYTES, Exchange, new_client, post, request_headers
from .trust import Credentials, Endpoint

OnDone = Callable[[Scenario, Observation], None]


@record
class LiveSettings:
    endpoint: Endpoint
    credentials: Credentials | None
    max_tokens: int
    max_seconds: float
    concurrency: int
    started: float  # time.monotonic() at the start of the run (the budget's origin)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def _observe(client: httpx.AsyncClient, contract: Contract, job: Job, settings: LiveSettings) -> tuple[Observation, Timing]:
    started_at, started = _stamp(), time.monotonic()
    observation = await _ask(client, contract, job.scenario, settings)
    duration = (time.monotonic() - started) * 1000
    if contract.version >= 2 and observation.error is None:
        observation = replace(observation, latency_ms=round(duration, 3))
    return observation, Timing(started_at, _stamp(), int(duration))


async def _ask(client: httpx.AsyncClient, contract: Contract, scenario: Scenario, settings: LiveSettings) -> Observation:
    """One attempt. Version 1: one request. Version 2: while the agent calls tools
    the scenario scripts results for, send them back (never executing anything),
    up to ``max_turns`` requests."""
    agent = contract.agent
    headers = request_headers(
        settings.credentials.header() if settings.credentials else None,
        settings.endpoint.host_header,
        f"behavegate/{__version__}",
    )
    messages = first_messages(scenario)
    earlier: list[ToolCall] = []
    errors: list[str | None] = []
    turns = 0
    while True:
        turns += 1
        now = time.monotonic()
        timeout = max(min(agent.timeout_seconds, settings.max_seconds - (now - settings.started)), 0.001)
        exchange = Exchange(
            url=settings.endpoint.connect_url or settings.endpoint.url,
            payload=build_request(agent, scenario, settings.max_tokens, messages),
            headers=headers,
            deadline=now + timeout,
        )
        try:
            raw = parse_body(await post(client, exchange))
            observation = normalize(raw, scenario.id, agent.missing_tool_calls)
        except EndpointError as error:
            return Observation(scenario_id=scenario.id, error=str(error))
        if contract.version < 2:
            return observation
        calls = observation.tool_calls or ()
        if not (scenario.tool_results and calls and turns < scenario.max_turns):
            break
        messages.append(assistant_turn(raw))
        for index, raw_call in enumerate(raw["choices"][0]["message"].get("tool_calls") or ()):
            content, failure = scripted_result(scenario, calls[index].name)
            call_id = raw_call.get("id") if isinstance(raw_call, dict) else None
            messages.append({"role": "tool", "tool_call_id": str(call_id or f"call_{turns}_{index}"), "content": content})
            errors.append(failure)
        earlier.extend(calls)
    if not earlier:
        return replace(observation, steps=turns)
    all_calls = None if observation.tool_calls is None else (*earlier, *observation.tool_calls)
    answered = observation.tool_calls == ()
    return replace(
        observation,
        tool_calls=all_calls,
        steps=turns + len(earlier),
        tool_errors=tuple(errors) if answered else None,
    )


def scripted_result(scenario: Scenario, name: str) -> tuple[str, str | None]:
    """(tool message content, error) for a call the agent made."""
    if name not in scenario.tool_results:
        return json.dumps({"error": f"no scripted result for tool {name!r}"}), f"no scripted result for tool {name!r}"
    result = scenario.tool_results[name]
    if isinstance(result, dict) and "error" in result:
        return json.dumps(result), str(result["error"])
    return (result if isinstance(result, str) else json.dumps(result)), None


@record
class Job:
    scenario: Scenario
    attempt: int


def jobs(contract: Contract, runs: int | None = None) -> list[Job]:
    """Every attempt to make: one per scenario (version 1), ``runs`` per scenario (version 2)."""
    if contract.version < 2:
        return [Job(s, 0) for s in contract.scenarios]
    return [Job(s, attempt) for s in contract.scenarios for attempt in range(runs or s.runs)]


async def observe_all(
    contract: Contract, settings: LiveSettings, on_done: OnDone | None = None, runs: int | None = None
) -> list[tuple[Job, Observation, Timing]]:
    """``concurrency`` workers, each with its own connection, take attempts in
    order; results come back in contract order whatever finishes first.

    ``on_done`` (the progress line judges each attempt: safety scans, regexes, schemas)
    runs on one thread of its own, never on the event loop: CPU work there would hold
    up every response in flight. One thread keeps the calls in completion order."""
    todo = jobs(contract, runs)
    results: list[tuple[Job, Observation, Timing] | None] = [None] * len(todo)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(len(todo)):
        queue.put_nowait(index)
    secure = (settings.endpoint.connect_url or settings.endpoint.url).startswith("https:")
    loop = asyncio.get_running_loop()
    done_calls: list[asyncio.Future[None]] = []

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="behavegate-judge") as judging:

        async def worker() -> None:
            async with new_client(1, secure) as client:
                while not queue.empty():
                    index = queue.get_nowait()
                    job = todo[index]
                    observation, timing = await _observe(client, contract, job, settings)
                    if on_done is not None:
                        done_calls.append(loop.run_in_executor(judging, on_done, job.scenario, observation))
                    results[index] = (job, observation, timing)

        await asyncio.gather(*(worker() for _ in range(min(settings.concurrency, len(todo)) or 1)))
        await asyncio.gather(*done_calls)
    return [r for r in results if r is not None]


def observe(
    contract: Contract, settings: LiveSettings, on_done: OnDone | None = None, runs: int | None = None
) -> list[tuple[Job, Observation, Timing]]:
    # Everything imported so far lives for the whole run: keep the collector from
    # rescanning it on every generation-2 pass while responses stream in.
    gc.freeze()
    try:
        return asyncio.run(observe_all(contract, settings, on_done, runs))
    finally:
        gc.unfreeze()


def provenance(settings: LiveSettings, max_scenarios: int, timeout_seconds: float) -> dict[str, object]:
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
        },
        "source_digest": None,
    }


def judge(
    contract: Contract,
    observations: list[Observation],
    settings: LiveSettings,
    options: RunOptions,
    facts: RunFacts,
    *,
    display_path: str,
) -> dict[str, Any]:
    attempts: dict[str, list[Observation]] = {}
    for observation in observations:
        attempts.setdefault(observation.scenario_id, []).append(observation)
    evaluation = evaluate(
        contract,
        {key: group[0] for key, group in attempts.items()},
        attempts=attempts,
        runs=options.runs,
        gates=options.gates(contract.gates),
    )
    return build_report(
        contract,
        evaluation,
        mode="live",
        provenance=provenance(settings, options.max_scenarios, contract.agent.timeout_seconds),
        facts=replace(facts, tool_call_count=len(contract.scenarios)),
        contract_display_path=display_path,
        version=__version__,
        secret=settings.credentials.token if settings.credentials else None,
        artifacts=options.artifacts,
    )


def observation_file(report: dict[str, Any]) -> str:
    """The persisted (redacted) observations of a report as an observation file
    that replays offline to the same verdicts.

    Version 1: a valid skylos v1 file. Fields that were not observed are left out;
    where live shape checks made a completion flag disagree with the finish reason,
    the finish reason is left out (the evidence stays incomplete), and empty text,
    which v1 files cannot carry, is left out. Version 2: every attempt, verbatim,
    with latency, usage, steps and tool errors.
    """
    v2 = report["contract"]["version"] >= 2
    scenarios = []
    for scenario in report["scenarios"]:
        attempts = [a["observation"] for a in scenario.get("attempts", [])] if v2 else [scenario.get("observation")]
        for observed in attempts:
            if observed is None:
                continue
            item = {key: value for key, value in observed.items() if value is not None}
            if "tool_calls" in item:
                item["tool_calls"] = [
                    {k: v for k, v in call.items() if not (k == "arguments" and v is None)} for call in item["tool_calls"]
                ]
            if not v2:
                _fit_version_1(item)
            scenarios.append(item)
    return json.dumps({"version": 2 if v2 else 1, "scenarios": scenarios}, indent=2, sort_keys=True)


def _fit_version_1(item: dict[str, Any]) -> None:
    if item.get("response") is not None and not str(item["response"]).strip():
        del item["response"]
    reason = item.get("finish_reason")
    if reason is not None and (
        item.get("response_complete") is not (reason == "stop")
        or item.get("tool_calls_complete") is not (reason in {"stop", "tool_calls"})
    ):
        del item["finish_reason"]
