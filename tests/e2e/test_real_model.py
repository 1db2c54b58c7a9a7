"""behavegate against a real model server (llama.cpp's llama-server + SmolLM2).

Run by `make e2e`, which starts the server and sets BEHAVEGATE_E2E_URL. Without a
server these tests are skipped, saying why; they never pass silently.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from behavegate.contract.load import load_contract
from behavegate.evidence import http_model
from behavegate.evidence.chat import build_request, encode_request, normalize
from behavegate.evidence.transport import Exchange, new_client, post, request_headers

ROOT = Path(__file__).resolve().parents[2]
URL = os.environ.get("BEHAVEGATE_E2E_URL")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not URL, reason="no real model server: run `make e2e` (it starts one and sets BEHAVEGATE_E2E_URL)"),
]


@pytest.fixture(scope="module")
def contract() -> Any:
    return load_contract("examples/real-model/contract.yml", ROOT)


def ask(contract: Any, scenario_id: str) -> tuple[dict[str, Any], http_model.Headers]:
    scenario = next(s for s in contract.scenarios if s.id == scenario_id)
    payload = build_request(contract.agent, scenario, 256)

    async def go() -> tuple[bytes, http_model.Headers]:
        async with new_client(1) as client:
            fields = [(b"Content-Type", b"application/json")]
            request = http_model.Request(
                "POST", http_model.parse_url(URL or ""), headers=fields, content=json.dumps(payload).encode()
            )
            response = await client.handle_async_request(request)
            try:
                return b"".join([piece async for piece in response.aiter_raw()]), response.headers
            finally:
                await response.aclose()

    body, headers = asyncio.run(go())
    return json.loads(body), headers


def test_requests_are_not_streamed_and_answers_are_plain_json(contract: Any) -> None:
    scenario = contract.scenarios[0]
    assert build_request(contract.agent, scenario, 256)["stream"] is False
    raw, headers = ask(contract, "weather-in-paris")
    assert headers.get("content-type", "").startswith("application/json")
    assert raw["object"] == "chat.completion"


def test_a_real_tool_call_comes_with_empty_content_and_usage(contract: Any) -> None:
    raw, _ = ask(contract, "weather-in-paris")
    message = raw["choices"][0]["message"]
    assert raw["choices"][0]["finish_reason"] == "tool_calls"
    assert message["content"] == "" and message["tool_calls"]
    observation = normalize(raw, "weather-in-paris", contract.agent.missing_tool_calls)
    assert observation.response == "" and observation.response_complete is False
    assert [c.name for c in observation.tool_calls or ()] == ["get_weather"]
    assert observation.tool_calls_complete is True
    assert observation.total_tokens and observation.total_tokens > 0


def test_a_plain_answer_omits_tool_calls_and_the_statement_makes_that_evidence(contract: Any) -> None:
    raw, _ = ask(contract, "plain-answer")
    assert "tool_calls" not in raw["choices"][0]["message"]
    assert normalize(raw, "plain-answer", "unobserved").tool_calls is None
    assert normalize(raw, "plain-answer", "none").tool_calls == ()


def test_the_transport_reads_a_real_server_within_the_deadline(contract: Any) -> None:
    scenario = contract.scenarios[0]
    exchange = Exchange(
        URL or "",
        encode_request(build_request(contract.agent, scenario, 64)),
        request_headers(None, None, "e2e"),
        time.monotonic() + 120,
    )

    async def go() -> bytes:
        async with new_client(1) as client:
            return await post(client, exchange)

    assert json.loads(asyncio.run(go()))["choices"]
