"""Opt-in retries (--retries, version 2): which failures are sent again, how long
behavegate waits, that every wait fits the request's deadline, and that each retry
is recorded and shown; on MockTransport, and a real loopback agent through
the CLI."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_agent import Reply, Request, empty_reply, json_reply, serve
from helpers import contract
from mock_transport import MockTransport

from behavegate.cli import main
from behavegate.evidence.chat import EndpointError, encode_request
from behavegate.evidence.h11_transport import NO_RESPONSE
from behavegate.evidence.live import LiveSettings, http_sender
from behavegate.evidence.retry import RetryPolicy, backoff, retrying
from behavegate.evidence.transport import retry_after_seconds
from behavegate.evidence.trust import Endpoint
from behavegate.model import Retry

OK = {"choices": [{"message": {"role": "assistant", "content": "fine", "tool_calls": None}, "finish_reason": "stop"}]}
V2 = contract("version: 2\nagent: {model: m}\nscenarios:\n  - {id: s, prompt: hi, expect: {response: {contains: [fine]}}}\n")


def answers(
    *replies: httpx.Response | type[httpx.TransportError] | httpx.TransportError,
) -> tuple[Callable[[httpx.Request], httpx.Response], list[int]]:
    """A MockTransport handler giving ``replies`` in order (an exception, or an exception class, is raised)."""
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        reply = replies[len(calls)]
        calls.append(1)
        if isinstance(reply, httpx.TransportError):
            raise reply
        if isinstance(reply, type):
            raise reply("reset", request=request)
        return httpx.Response(reply.status_code, headers=reply.headers, stream=httpx.ByteStream(reply.content))  # fresh, unread

    return handler, calls


def ask(
    handler: Callable[[httpx.Request], httpx.Response], retries: int, timeout: float = 5.0
) -> tuple[tuple[Any, int] | EndpointError, list[Retry], list[float]]:
    """One request through the retry policy; sleeping is recorded, not done."""
    log: list[Retry] = []
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def go() -> tuple[Any, int]:
        settings = LiveSettings(
            Endpoint("http://agent.test/v1", "cli_override", "f", False, "127.0.0.1"), None, 8, 60.0, 1, time.monotonic()
        )
        async with MockTransport(handler) as client:
            send = retrying(http_sender(client, settings, V2), RetryPolicy(retries), 1, log, sleep=sleep)
            return await send(encode_request({"x": 1}), time.monotonic() + timeout, 1 << 20)

    try:
        result: tuple[Any, int] | EndpointError = asyncio.run(go())
    except EndpointError as error:
        result = error
    return result, log, slept


def test_429_with_retry_after_waits_what_the_server_asked_then_passes() -> None:
    handler, calls = answers(
        httpx.Response(429, headers={"Retry-After": "2"}),
        httpx.Response(429, headers={"Retry-After": "1"}),
        httpx.Response(200, json=OK),
    )
    result, log, slept = ask(handler, retries=3)
    assert not isinstance(result, EndpointError) and result[0] == OK
    assert len(calls) == 3 and slept == [2.0, 1.0]
    assert log == [Retry(1, "HTTP 429", 2000), Retry(1, "HTTP 429", 1000)]


def test_503_backs_off_exponentially_and_gives_up_after_n_retries_with_the_count() -> None:
    handler, calls = answers(*[httpx.Response(503)] * 4)
    result, log, slept = ask(handler, retries=3)
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint returned HTTP 503 after 3 retries"
    assert len(calls) == 4 and slept == [0.5, 1.0, 2.0]
    assert [r.reason for r in log] == ["HTTP 503"] * 3


@pytest.mark.parametrize("status", [502, 504])
def test_gateway_errors_are_retried(status: int) -> None:
    handler, _ = answers(httpx.Response(status), httpx.Response(200, json=OK))
    result, log, _ = ask(handler, retries=1)
    assert not isinstance(result, EndpointError) and log == [Retry(1, f"HTTP {status}", 500)]


def test_a_connection_reset_before_any_answer_is_retried() -> None:
    closed = httpx.RemoteProtocolError(NO_RESPONSE)  # both transports' words for a close before any answer
    handler, _ = answers(closed, httpx.ReadError, httpx.Response(200, json=OK))
    result, log, _ = ask(handler, retries=2)
    assert not isinstance(result, EndpointError) and [r.reason for r in log] == ["connection reset"] * 2


@pytest.mark.parametrize("words", ["malformed response status line", "response head is too large", "incomplete response head"])
def test_a_malformed_answer_is_the_agents_and_never_retried(words: str) -> None:
    handler, calls = answers(httpx.RemoteProtocolError(words), httpx.Response(200, json=OK))
    result, log, _ = ask(handler, retries=2)
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint request failed: ConnectionError"
    assert log == [] and len(calls) == 1


@pytest.mark.parametrize("status", [400, 401, 404, 500])
def test_other_statuses_are_the_agents_answer_and_never_retried(status: int) -> None:
    handler, calls = answers(httpx.Response(status), httpx.Response(200, json=OK))
    result, log, _ = ask(handler, retries=5)
    assert isinstance(result, EndpointError) and str(result) == f"agent endpoint returned HTTP {status}"
    assert len(calls) == 1 and log == []


def test_a_refused_connection_and_a_malformed_answer_are_not_retried() -> None:
    handler, calls = answers(httpx.ConnectError, httpx.Response(200, json=OK))
    result, log, _ = ask(handler, retries=5)
    assert isinstance(result, EndpointError) and len(calls) == 1 and log == []
    handler, calls = answers(httpx.Response(200, content=b"{nope"), httpx.Response(200, json=OK))
    result, log, _ = ask(handler, retries=5)
    assert isinstance(result, EndpointError) and len(calls) == 1 and log == []


def test_a_wait_that_would_pass_the_deadline_is_not_made() -> None:
    handler, calls = answers(httpx.Response(429, headers={"Retry-After": "30"}), httpx.Response(200, json=OK))
    result, log, slept = ask(handler, retries=3, timeout=5.0)
    assert isinstance(result, EndpointError)
    assert str(result) == "agent endpoint returned HTTP 429; not retried: waiting 30 s would pass the request deadline"
    assert len(calls) == 1 and log == [] and slept == []


def test_without_retries_a_429_is_the_attempts_error_as_before() -> None:
    handler, calls = answers(httpx.Response(429), httpx.Response(200, json=OK))
    result, _, _ = ask(handler, retries=0)
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint returned HTTP 429" and len(calls) == 1


def test_retry_after_is_seconds_or_an_http_date_and_backoff_is_capped() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Thu, 01 Jan 2026 00:00:03 GMT", now) == 3.0
    assert retry_after_seconds("Wed, 31 Dec 2025 00:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None and retry_after_seconds("-1") is None
    policy = RetryPolicy(10)
    assert [backoff(policy, n, None) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert backoff(policy, 1, 20.0) == 20.0  # the server's word is never cut short


# --- a real agent that is busy twice, through the CLI -----------------------------------------

BUSY = """version: 2
agent:
  model: m
  missing_tool_calls: none
  tools:
    - {name: lookup, description: d, parameters: {type: object}}
scenarios:
  - id: busy
    prompt: busy
    expect:
      response: {contains: [fine]}
  - id: calm
    prompt: calm
    expect:
      response: {contains: [fine]}
"""


class Busy:
    """Answers 429 (Retry-After: 0) to the first two requests for "busy", then 200."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        prompt = request.prompt
        with self.lock:
            self.seen[prompt] = count = self.seen.get(prompt, 0) + 1
        return empty_reply(429, Retry_After="0") if prompt == "busy" and count <= 2 else json_reply(OK)


BUSY_AGENT = Busy()


def run(url: str, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, dict[str, Any], str]:
    """The JSON report and the table of the same run (the busy server starts afresh for each)."""
    BUSY_AGENT.seen = {}
    code = main(["test", "c.yml", "--endpoint", url, "--no-artifacts", "--format", "json", *more])
    report = json.loads(capsys.readouterr().out)
    BUSY_AGENT.seen = {}
    main(["test", "c.yml", "--endpoint", url, "--no-artifacts", *more])
    return code, report, capsys.readouterr().out


def verdicts(report: dict[str, Any]) -> list[Any]:
    return [(s["id"], s["status"], [(a["assertion"], a["status"]) for a in s["assertions"]]) for s in report["scenarios"]]


def test_a_server_answering_429_twice_then_200_gets_the_verdicts_of_a_calm_one_and_the_retries_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(BUSY)
    with serve(lambda request: OK) as url:
        calm_code, calm, _ = run(url, capsys)
    with serve(BUSY_AGENT) as url:
        code, report, table = run(url, capsys, "--retries", "2")
        without_code, without, _ = run(url, capsys)
    assert code == calm_code == 0 and verdicts(report) == verdicts(calm)
    observation = report["scenarios"][0]["attempts"][0]["observation"]
    assert observation["retries"] == [{"turn": 1, "reason": "HTTP 429", "waited_ms": 0}] * 2
    assert "retries" not in report["scenarios"][1]["attempts"][0]["observation"]  # shown only where made
    assert "busy: attempt 1 passed after 2 retries (HTTP 429, HTTP 429)" in table
    # Without --retries the same server leaves the attempt incomplete, as before.
    assert (
        without_code == 2 and without["scenarios"][0]["attempts"][0]["observation"]["error"] == "agent endpoint returned HTTP 429"
    )
    # Saved, the retries replay with the evidence.
    BUSY_AGENT.seen = {}
    with serve(BUSY_AGENT) as url:
        main(
            [
                "test",
                "c.yml",
                "--endpoint",
                url,
                "--no-artifacts",
                "--retries",
                "2",
                "--save-observations",
                "o.json",
                "--summary",
                "summary.md",
            ]
        )
    capsys.readouterr()
    assert "**Retried** `busy: attempt 1 passed after 2 retries (HTTP 429, HTTP 429)`" in (tmp_path / "summary.md").read_text()
    assert main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--format", "json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["scenarios"][0]["attempts"][0]["observation"]["retries"] == observation["retries"]


def test_retries_need_a_version_2_contract_and_a_live_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v1.yml").write_text(
        "version: 1\nagent: {model: m}\nscenarios:\n  - {id: s, prompt: hi, expect: {refusal: false}}\n"
    )
    assert main(["test", "v1.yml", "--endpoint", "http://127.0.0.1:9/v1", "--retries", "1"]) == 2
    assert "--retries needs a version 2 contract" in capsys.readouterr().err
    (tmp_path / "c.yml").write_text(BUSY)
    assert main(["test", "c.yml", "--endpoint", "http://127.0.0.1:9/v1", "--retries", "11"]) == 2
    assert "--retries must be between 0 and 10" in capsys.readouterr().err


def test_shards_of_a_run_with_retries_merge_with_the_retries_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard report carries an attempt's retries: merge read it as an unknown key and refused the run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(BUSY)
    BUSY_AGENT.seen = {}
    with serve(BUSY_AGENT) as url:
        for shard in ("1/2", "2/2"):
            assert (
                main(
                    [
                        "test",
                        "c.yml",
                        "--endpoint",
                        url,
                        "--retries",
                        "2",
                        "--shard",
                        shard,
                        "--report",
                        f"shard-{shard[0]}.json",
                        "--no-artifacts",
                    ]
                )
                == 0
            )
    capsys.readouterr()
    assert main(["merge", "shard-1.json", "shard-2.json", "--no-artifacts", "--format", "json"]) == 0
    merged = {s["id"]: s["attempts"][0]["observation"] for s in json.loads(capsys.readouterr().out)["scenarios"]}
    assert merged["busy"]["retries"] == [{"turn": 1, "reason": "HTTP 429", "waited_ms": 0}] * 2
    assert "retries" not in merged["calm"]
