"""Per-attempt budgets: every turn of a multi-turn attempt counts against one
budget of request bytes, response bytes and tokens, so a run's memory is bounded
by concurrency × the budget; and usage is the sum over the turns."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_agent import FakeAgent, Reply
from helpers import PEAK_RSS_SCRIPT, contract
from mock_transport import MockTransport

from behavegate import limits
from behavegate.evidence.live import AttemptBudget, LiveSettings, _ask
from behavegate.evidence.trust import Endpoint

MULTI_TURN = """version: 2
agent:
  model: m
  missing_tool_calls: none
  tools:
    - {{name: lookup, description: d, parameters: {{type: object}}}}
scenarios:
  - id: loop
    prompt: find A-1
    runs: {runs}
    max_turns: 20
    tool_results: {{lookup: {{status: shipped}}}}
    expect:
      tools: {{calls: {{lookup: {{min: 1}}}}}}
      usage: {{max_total_tokens: 500}}
"""


def _tool_turn(content: str, tokens: int | None) -> bytes:
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}],
    }
    body: dict[str, Any] = {"choices": [{"message": message, "finish_reason": "tool_calls"}]}
    if tokens is not None:
        body["usage"] = {"total_tokens": tokens}
    return json.dumps(body).encode()


# --- a real agent that re-sends ~2 MiB every turn --------------------------------------------


BLOATED = _tool_turn("x" * (2 * 1024 * 1024 - 4096), 10)


@pytest.fixture
def bloated() -> Iterator[FakeAgent]:
    """Answers every turn with ~2 MiB of assistant text and another tool call, on kept-alive
    connections; it reads and drops the bodies (the server must not be what grows)."""
    with FakeAgent(lambda request: Reply(BLOATED), keep_alive=True, keep_bodies=False) as agent:
        yield agent


@pytest.mark.slow  # scale or timing: `make test-slow`
def test_a_bloating_multi_turn_agent_at_concurrency_16_stays_under_300_mb_and_each_attempt_names_its_budget(
    bloated: FakeAgent, tmp_path: Path
) -> None:
    (tmp_path / "contract.yml").write_text(MULTI_TURN.format(runs=16))
    (tmp_path / "rss.py").write_text(PEAK_RSS_SCRIPT)
    command = [
        sys.executable,
        "rss.py",
        "peak.txt",
        "test",
        "contract.yml",
        "--endpoint",
        bloated.url,
        "--concurrency",
        "16",
        "--max-seconds",
        "40",
        "--no-artifacts",
        "--format",
        "json",
        "--output",
        "report.json",
    ]
    started = time.monotonic()
    with (tmp_path / "stderr").open("wb") as stderr:
        child = subprocess.run(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr, check=False)
    elapsed = time.monotonic() - started
    peak_mb = int((tmp_path / "peak.txt").read_text()) / 1024
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB in {elapsed:.1f} s"
    assert child.returncode == 2, (tmp_path / "stderr").read_text()
    report = json.loads((tmp_path / "report.json").read_text())
    attempts = report["scenarios"][0]["attempts"]
    assert len(attempts) == 16 and {a["status"] for a in attempts} == {"incomplete"}
    for attempt in attempts:
        error = attempt["observation"]["error"]
        assert error.startswith("attempt budget exceeded: request bytes ")
        assert f"> {limits.ATTEMPT_MAX_REQUEST_BYTES:,}" in error
    assert (
        max(r.length for r in bloated.requests) <= limits.ATTEMPT_MAX_REQUEST_BYTES
    )  # each attempt ended by its bytes, not --max-seconds


# --- accounting on MockTransport -------------------------------------------------------


def _run(text: str, handler: Callable[[httpx.Request], httpx.Response], budget: AttemptBudget | None = None) -> Any:
    parsed = contract(text)
    endpoint = Endpoint(
        url="http://agent.test/v1/chat/completions", source="cli_override", fingerprint="f", consent=False, host="agent.test"
    )
    settings = LiveSettings(
        endpoint=endpoint,
        credentials=None,
        max_tokens=64,
        max_seconds=30.0,
        concurrency=1,
        started=time.monotonic(),
        budget=budget or AttemptBudget(),
    )

    async def go() -> Any:
        async with MockTransport(handler) as client:
            return await _ask(client, parsed, parsed.scenarios[0], settings)

    return asyncio.run(go())


def _reply(body: bytes) -> httpx.Response:
    return httpx.Response(200, headers={"Content-Length": str(len(body))}, stream=httpx.ByteStream(body))


def _turns(*replies: bytes) -> tuple[Callable[[httpx.Request], httpx.Response], list[bytes]]:
    sent: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.read())
        return _reply(replies[len(sent) - 1])

    return handler, sent


FINAL_900_100 = (
    _tool_turn("looking", 900),
    json.dumps(
        {
            "choices": [{"message": {"role": "assistant", "content": "shipped", "tool_calls": []}, "finish_reason": "stop"}],
            "usage": {"total_tokens": 100},
        }
    ).encode(),
)


def test_usage_of_a_multi_turn_attempt_is_the_sum_over_its_requests() -> None:
    handler, sent = _turns(*FINAL_900_100)
    observation = _run(MULTI_TURN.format(runs=1), handler)
    assert len(sent) == 2 and observation.error is None
    assert observation.total_tokens == 1000


def test_a_turn_without_reported_usage_leaves_the_attempt_usage_unobserved() -> None:
    handler, _ = _turns(_tool_turn("looking", None), FINAL_900_100[1])
    assert _run(MULTI_TURN.format(runs=1), handler).total_tokens is None


def test_summed_usage_fails_a_500_token_budget_live_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from behavegate.cli import main

    replies = iter(FINAL_900_100)

    def respond(request: httpx.Request) -> httpx.Response:
        return _reply(next(replies))

    def mocked(*args: Any, **kwargs: Any) -> MockTransport:
        return MockTransport(respond)

    monkeypatch.setattr("behavegate.evidence.live.new_client", mocked)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(MULTI_TURN.format(runs=1))
    live = main(
        [
            "test",
            "contract.yml",
            "--endpoint",
            "http://127.0.0.1:9/v1/chat/completions",
            "--format",
            "json",
            "--no-artifacts",
            "--save-observations",
            "recorded.json",
        ]
    )
    live_report = json.loads(capsys.readouterr().out)
    usage = next(v for v in live_report["scenarios"][0]["attempts"][0]["assertions"] if v["kind"] == "usage_max_total_tokens")
    assert live == 1 and usage["status"] == "fail" and usage["observed"] == 1000
    recorded = json.loads((tmp_path / "recorded.json").read_text())
    assert recorded["version"] == 2 and recorded["scenarios"][0]["total_tokens"] == 1000
    replayed = main(["test", "contract.yml", "--observations", "recorded.json", "--format", "json", "--no-artifacts"])
    offline = json.loads(capsys.readouterr().out)
    assert replayed == live and offline["scenarios"][0]["status"] == live_report["scenarios"][0]["status"] == "fail"


def test_the_request_budget_stops_the_attempt_before_the_request_that_would_exceed_it() -> None:
    big = _tool_turn("y" * 3000, 1)
    handler, sent = _turns(*[big] * 20)
    observation = _run(MULTI_TURN.format(runs=1), handler, AttemptBudget(request_bytes=12_000))
    assert sum(map(len, sent)) <= 12_000 and len(sent) == 3
    assert observation.error is not None
    assert observation.error.startswith("attempt budget exceeded: request bytes ")
    assert "> 12,000 at turn 4" in observation.error


def test_the_response_budget_caps_what_is_read_across_turns() -> None:
    big = _tool_turn("z" * 3000, 1)
    handler, sent = _turns(*[big] * 20)
    observation = _run(MULTI_TURN.format(runs=1), handler, AttemptBudget(response_bytes=10_000))
    assert len(sent) == 4  # three answers fit in 10,000 bytes, the fourth does not
    assert observation.error is not None and observation.error.startswith("attempt budget exceeded: response bytes ")
    assert "> 10,000 at turn 4" in observation.error


def test_the_token_budget_stops_the_attempt_once_reported_usage_reaches_it() -> None:
    handler, sent = _turns(*[_tool_turn("t", 400)] * 20)
    observation = _run(MULTI_TURN.format(runs=1), handler, AttemptBudget(tokens=1_000))
    assert len(sent) == 3  # 400 + 400 + 400 reported: no fourth request
    assert observation.error == "attempt budget exceeded: tokens 1,200 > 1,000 at turn 4"


def test_budgets_never_touch_a_version_1_request() -> None:
    text = textwrap.dedent("""\
        version: 1
        agent:
          model: m
        scenarios:
          - id: s
            prompt: p
            expect: {refusal: false}
        """)
    handler, sent = _turns(
        json.dumps(
            {
                "choices": [{"message": {"content": "ok", "refusal": None}, "finish_reason": "stop"}],
                "usage": {"total_tokens": 10**9},
            }
        ).encode()
    )
    observation = _run(text, handler, AttemptBudget(request_bytes=1, response_bytes=1, tokens=1))
    assert observation.error is None and observation.response == "ok" and len(sent) == 1


def test_a_request_sent_from_the_encoded_history_is_byte_for_byte_json_dumps() -> None:
    from behavegate.evidence.chat import build_request, encode_message, encode_request

    parsed = contract(MULTI_TURN.format(runs=1).replace("missing_tool_calls: none", "parameters: {temperature: 0, seed: 7}"))
    payload = build_request(parsed.agent, parsed.scenarios[0], 64)
    payload["messages"].append({"role": "assistant", "content": 'é ✓ \u2028 "q"', "tool_calls": [{"id": "c1"}]})
    history = [encode_message(m) for m in payload["messages"]]
    assert b"".join(encode_request(payload, history)) == json.dumps(payload).encode("utf-8")
    assert encode_request(payload) == (json.dumps(payload).encode("utf-8"),)
