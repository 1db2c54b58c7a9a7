"""The live adapter: request shape and normalization on MockTransport,
and every transport outcome against real loopback servers."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import textwrap
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fake_agent import RawServer, Reply, Request, raw_agent, serve
from helpers import contract
from mock_transport import MockTransport

from behavegate.evidence.chat import EndpointError, build_request, decode_body, encode_request
from behavegate.evidence.transport import Exchange, new_client, post, request_headers

CONTRACT = contract(
    """
version: 1
agent:
  model: m
  tools:
    - {name: a, description: tool a, parameters: {type: object}}
    - {name: b, description: tool b, parameters: {type: object}}
scenarios:
  - id: s
    system_prompt: "  be brief  "
    prompt: "  hello  "
    available_tools: [b]
    expect: {refusal: false}
  - id: none
    prompt: hi
    available_tools: []
    expect: {refusal: false}
"""
)


def completion(message: dict[str, Any], finish_reason: Any = "stop") -> bytes:
    return json.dumps({"choices": [{"message": message, "finish_reason": finish_reason}]}).encode()


def exchange(url: str, timeout: float = 2.0, payload: dict[str, Any] | None = None) -> Exchange:
    return Exchange(url, encode_request(payload or {"x": 1}), request_headers(None, None, "test"), time.monotonic() + timeout)


async def _post_with(handler: Callable[[httpx.Request], httpx.Response], timeout: float = 2.0) -> bytes:
    async with MockTransport(handler) as client:
        return await post(client, exchange("http://agent.test/v1/chat/completions", timeout))


def post_mock(handler: Callable[[httpx.Request], httpx.Response]) -> bytes:
    return asyncio.run(_post_with(handler))


# --- request and normalization (no network) ------------------------------------------


def test_request_is_exactly_the_skylos_shape() -> None:
    scenario = CONTRACT.scenarios[0]
    assert build_request(CONTRACT.agent, scenario, 7) == {
        "model": "m",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}],
        "stream": False,
        "max_tokens": 7,
        "tools": [{"type": "function", "function": {"name": "b", "description": "tool b", "parameters": {"type": "object"}}}],
    }
    assert "tools" not in build_request(CONTRACT.agent, CONTRACT.scenarios[1], 1024)


def test_tool_call_arguments_may_be_objects_or_json_strings() -> None:
    body = completion(
        {
            "content": None,
            "tool_calls": [
                {"function": {"name": " a ", "arguments": '{"k": 1}'}},
                {"function": {"name": "b", "arguments": {"k": 2}}},
                {"function": {"name": "b", "arguments": "not json"}},
            ],
        },
        "tool_calls",
    )
    observation = decode_body(body, "s")
    assert [(c.name, c.arguments) for c in observation.tool_calls or ()] == [("a", {"k": 1}), ("b", {"k": 2}), ("b", None)]
    assert observation.tool_calls_complete is True and observation.response_complete is False


def test_missing_tool_calls_key_is_not_evidence_of_no_calls() -> None:
    observation = decode_body(completion({"content": "hi"}), "s")
    assert observation.tool_calls is None and observation.tool_calls_complete is False
    assert observation.response == "hi" and observation.response_complete is True


def test_content_parts_are_joined_and_unknown_parts_break_the_shape() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "output_text", "text": "b"}, {"type": "image_url", "image_url": {}}]
    observation = decode_body(completion({"content": parts, "tool_calls": None}), "s")
    assert observation.response == "ab" and observation.response_complete is False


def test_refusal_null_means_did_not_refuse() -> None:
    assert decode_body(completion({"content": "x", "refusal": None}), "s").refusal is False
    assert decode_body(completion({"content": "x", "refusal": "  "}), "s").refusal is False
    assert decode_body(completion({"content": "x", "refusal": "no way"}), "s").refusal is True
    assert decode_body(completion({"content": "x"}), "s").refusal is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"\xff", "agent endpoint returned invalid JSON"),
        (b'{"a": NaN}', "agent endpoint returned invalid JSON"),
        (b'{"a": 1, "a": 2}', "agent endpoint response contains duplicate keys"),
        (b"[]", "agent endpoint response must be an object"),
        (b'{"choices": []}', "agent endpoint response requires choices[0]"),
        (b'{"choices": [{"message": "x"}]}', "agent endpoint response requires choices[0].message"),
        (("[" * 66 + "]" * 66).encode(), "agent endpoint response nesting exceeds 64"),
    ],
)
def test_bad_bodies_become_scenario_errors(body: bytes, message: str) -> None:
    with pytest.raises(EndpointError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        decode_body(body, "s")


def test_redirects_are_never_followed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions", "followed a redirect"
        return httpx.Response(302, headers={"Location": "http://elsewhere.test/"})

    with pytest.raises(EndpointError, match="redirects are not allowed"):
        post_mock(handler)


@pytest.mark.parametrize("status", [400, 401, 500, 503])
def test_non_2xx_is_reported_with_its_status(status: int) -> None:
    with pytest.raises(EndpointError, match=f"returned HTTP {status}"):
        post_mock(lambda request: httpx.Response(status, json={}))


def test_any_2xx_is_read_and_headers_are_sent() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, stream=httpx.ByteStream(b"{}"))

    assert post_mock(handler) == b"{}"
    headers = seen[0].headers
    assert headers["accept"] == "application/json" and headers["content-type"] == "application/json"
    assert json.loads(seen[0].content) == {"x": 1}


def test_declared_oversized_body_is_refused_before_reading() -> None:
    with pytest.raises(EndpointError, match="too large"):
        post_mock(
            lambda request: httpx.Response(200, headers={"Content-Length": str(3 * 1024 * 1024)}, stream=httpx.ByteStream(b"{}"))
        )


def test_a_compression_bomb_is_stopped_at_the_cap() -> None:
    bomb = gzip.compress(b" " * (50 * 1024 * 1024))
    tracemalloc.start()
    with pytest.raises(EndpointError, match="too large"):
        post_mock(lambda request: httpx.Response(200, headers={"Content-Encoding": "gzip"}, stream=httpx.ByteStream(bomb)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16 * 1024 * 1024


# --- real loopback servers ---------------------------------------------------------------


@pytest.fixture
def raw_server() -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    """A loopback TCP server whose connection handler the test writes byte by byte (after the request is read)."""
    servers: list[RawServer] = []

    def start(handle: Callable[[socket.socket], None]) -> str:
        servers.append(raw_agent(lambda connection, body: handle(connection)))
        return servers[-1].url

    yield start
    for server in servers:
        server.close()


def real_post(url: str, timeout: float) -> tuple[bytes | EndpointError, float]:
    async def go() -> bytes:
        async with new_client(1) as client:
            return await post(client, exchange(url, timeout))

    started = time.monotonic()
    try:
        result: bytes | EndpointError = asyncio.run(go())
    except EndpointError as error:
        result = error
    return result, time.monotonic() - started


# Cut off at the deadline: not before it (a lower bound, which load cannot break), and not at
# the server's pace: the request ends while the server is still at it (an order, not seconds).


def test_a_trickling_server_is_cut_off_at_the_deadline(raw_server: Callable[[Callable[[socket.socket], None]], str]) -> None:
    trickled_all = threading.Event()

    def trickle(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
        for _ in range(1000):  # 50 s of a byte every 50 ms
            connection.sendall(b" ")
            time.sleep(0.05)
        trickled_all.set()

    result, elapsed = real_post(raw_server(trickle), timeout=1.5)
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint exceeded request deadline"
    assert elapsed >= 1.5 - 0.05 and not trickled_all.is_set()


def test_a_server_that_never_answers_is_cut_off_at_the_deadline(
    raw_server: Callable[[Callable[[socket.socket], None]], str],
) -> None:
    release, gave_up = threading.Event(), threading.Event()

    def silent(connection: socket.socket) -> None:
        if not release.wait(30):
            gave_up.set()

    try:
        result, elapsed = real_post(raw_server(silent), timeout=1.0)
        assert isinstance(result, EndpointError) and "deadline" in str(result)
        assert elapsed >= 1.0 - 0.05 and not gave_up.is_set()
    finally:
        release.set()


def test_an_endless_body_is_stopped_at_2_mib_with_bounded_memory(
    raw_server: Callable[[Callable[[socket.socket], None]], str],
) -> None:
    def endless(connection: socket.socket) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 65536
        for _ in range(2000):  # ~128 MiB if nobody stops reading
            connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))

    tracemalloc.start()
    result, _ = real_post(raw_server(endless), timeout=20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint response is too large"
    assert peak < 16 * 1024 * 1024


def test_a_connection_closed_without_reply_is_a_connection_error(
    raw_server: Callable[[Callable[[socket.socket], None]], str],
) -> None:
    result, _ = real_post(raw_server(lambda connection: None), timeout=2)
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint request failed: ConnectionError"


def test_a_refused_connection_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result, _ = real_post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=2)
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint request failed: ConnectionError"


def test_a_body_cut_short_is_reported(raw_server: Callable[[Callable[[socket.socket], None]], str]) -> None:
    def short(connection: socket.socket) -> None:
        connection.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{"choices"')

    result, _ = real_post(raw_server(short), timeout=2)
    assert isinstance(result, EndpointError) and str(result) == "agent endpoint request failed: ChunkedEncodingError"


# --- judging stays off the event loop ------------------------------------------------


SLOW_S = 0.4


def _two_speeds(request: Request) -> Reply:
    """Answers the prompt "fast" at once and "slow" after SLOW_S."""
    body = completion({"role": "assistant", "content": "ok"})
    return Reply(body, delay_s=SLOW_S if request.prompt == "slow" else 0.0)


def test_a_slow_judge_does_not_delay_requests_in_flight() -> None:
    """Judging an attempt that finished (progress runs every assertion on it) must not hold up
    another attempt's response: on the event loop, 1.5 s of CPU work would delay it by 1.5 s."""
    from behavegate.evidence import live
    from behavegate.evidence.trust import Endpoint

    with serve(_two_speeds) as url:
        two = contract(
            textwrap.dedent("""\
                version: 1
                agent: {model: m}
                scenarios:
                  - {id: fast, prompt: fast, expect: {refusal: false}}
                  - {id: slow, prompt: slow, expect: {refusal: false}}
                """)
        )
        settings = live.LiveSettings(Endpoint(url, "cli_override", "f", False, "127.0.0.1"), None, 16, 30.0, 2, time.monotonic())
        judged: list[str] = []

        spun: list[float] = []

        def slow_judge(job: Any, observation: Any, timing: Any) -> None:
            scenario = job.scenario
            if scenario.id == "fast":
                started = time.perf_counter()
                while time.perf_counter() < started + 1.5:  # pure-Python CPU work, like a safety scan
                    pass
                spun.append((time.perf_counter() - started) * 1000)
            judged.append(scenario.id)

        results = live.observe(two, settings, slow_judge)
    timings = {job.scenario.id: timing.duration_ms for job, _, timing in results}
    assert sorted(judged) == ["fast", "slow"]
    # Two times of this run compared: on the event loop, the slow answer would be read only once
    # the fast one's judge was done, after more than the judge's spin; off it, after SLOW_S.
    assert timings["slow"] < spun[0], (timings, spun)


def _gzipped(body: bytes) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(200, headers={"Content-Encoding": "gzip"}, stream=httpx.ByteStream(body))


def test_gzip_is_read_as_urllib3_reads_it_for_skylos() -> None:
    """Every member in turn (a second member is part of the body), bytes after a whole member dropped."""
    answer = b'{"ok": 1}'
    assert post_mock(_gzipped(gzip.compress(answer))) == answer
    assert post_mock(_gzipped(gzip.compress(b'{"ok": ') + gzip.compress(b"1}"))) == answer
    assert post_mock(_gzipped(gzip.compress(answer) + gzip.compress(b"garbage"))) == answer + b"garbage"  # invalid JSON then
    assert post_mock(_gzipped(gzip.compress(answer) + b"not gzip")) == answer


def test_a_corrupt_gzip_body_is_a_decoding_error() -> None:
    corrupt = bytearray(gzip.compress(b'{"ok": 1}'))
    corrupt[-6] ^= 0xFF  # the CRC
    with pytest.raises(EndpointError, match=r"^agent endpoint request failed: ContentDecodingError$"):
        post_mock(_gzipped(bytes(corrupt)))
    with pytest.raises(EndpointError, match="ContentDecodingError"):
        post_mock(_gzipped(b"\x1f\x8b not gzip at all"))
