"""The live path: ask a running agent, concurrently, and keep what it showed.

Every scenario is an independent request; at most ``concurrency`` are in
flight. A transport failure is recorded on that scenario (all its assertions
become incomplete) and the run goes on. Results come back in contract order.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import httpx

from . import __version__
from .artifacts import Timing
from .chat import EndpointError, build_request, decode_body
from .evaluate import evaluate
from .model import Contract, Observation, Scenario
from .options import RunOptions
from .report import RunFacts, build_report
from .transport import MAX_RESPONSE_BYTES, Exchange, new_client, post, request_headers
from .trust import Credentials, Endpoint

OnDone = Callable[[Scenario, Observation], None]


@dataclass(frozen=True)
class LiveSettings:
    endpoint: Endpoint
    credentials: Credentials | None
    max_tokens: int
    max_seconds: float
    concurrency: int
    started: float  # time.monotonic() at the start of the run (the budget's origin)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def _observe(
    client: httpx.AsyncClient, contract: Contract, scenario: Scenario, settings: LiveSettings, gate: asyncio.Semaphore
) -> tuple[Observation, Timing]:
    async with gate:
        started_at, started = _stamp(), time.monotonic()
        observation = await _ask(client, contract, scenario, settings)
        duration = int((time.monotonic() - started) * 1000)
        return observation, Timing(started_at, _stamp(), duration)


async def _ask(client: httpx.AsyncClient, contract: Contract, scenario: Scenario, settings: LiveSettings) -> Observation:
    now = time.monotonic()
    budget_left = settings.max_seconds - (now - settings.started)
    timeout = max(min(contract.agent.timeout_seconds, budget_left), 0.001)
    headers = request_headers(
        settings.credentials.header() if settings.credentials else None,
        settings.endpoint.host_header,
        f"behavegate/{__version__}",
    )
    exchange = Exchange(
        url=settings.endpoint.connect_url or settings.endpoint.url,
        payload=build_request(contract.agent, scenario, settings.max_tokens),
        headers=headers,
        deadline=now + timeout,
    )
    try:
        body = await post(client, exchange)
        return decode_body(body, scenario.id)
    except EndpointError as error:
        return Observation(scenario_id=scenario.id, error=str(error))


async def observe_all(
    contract: Contract, settings: LiveSettings, on_done: OnDone | None = None
) -> list[tuple[Observation, Timing]]:
    gate = asyncio.Semaphore(settings.concurrency)
    async with new_client(settings.concurrency) as client:

        async def one(scenario: Scenario) -> tuple[Observation, Timing]:
            result = await _observe(client, contract, scenario, settings, gate)
            if on_done is not None:
                on_done(scenario, result[0])
            return result

        return list(await asyncio.gather(*(one(s) for s in contract.scenarios)))


def observe(contract: Contract, settings: LiveSettings, on_done: OnDone | None = None) -> list[tuple[Observation, Timing]]:
    return asyncio.run(observe_all(contract, settings, on_done))


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
    evaluation = evaluate(contract, {o.scenario_id: o for o in observations})
    return build_report(
        contract,
        evaluation,
        mode="live",
        provenance=provenance(settings, options.max_scenarios, contract.agent.timeout_seconds),
        facts=replace(facts, tool_call_count=len(observations)),
        contract_display_path=display_path,
        version=__version__,
        secret=settings.credentials.token if settings.credentials else None,
        artifacts=options.artifacts,
    )


def observation_file(report: dict[str, Any]) -> str:
    """The persisted (redacted) observations of a report as a valid v1 observation file.

    Fields that were not observed are left out. Where live shape checks made a
    completion flag disagree with the finish reason (for example content parts
    of an unknown type), the finish reason is left out and the flag kept, so
    the file stays valid and the evidence stays incomplete.
    """
    scenarios = []
    for scenario in report["scenarios"]:
        observed = scenario.get("observation")
        if observed is None:
            continue
        item = {key: value for key, value in observed.items() if value is not None}
        if item.get("response") is not None and not str(item["response"]).strip():
            del item["response"]  # v1 files cannot carry empty text
        if "tool_calls" in item:
            item["tool_calls"] = [
                {k: v for k, v in call.items() if not (k == "arguments" and v is None)} for call in item["tool_calls"]
            ]
        reason = item.get("finish_reason")
        if reason is not None and (
            item.get("response_complete") is not (reason == "stop")
            or item.get("tool_calls_complete") is not (reason in {"stop", "tool_calls"})
        ):
            del item["finish_reason"]
        scenarios.append(item)
    return json.dumps({"version": 1, "scenarios": scenarios}, indent=2, sort_keys=True)
