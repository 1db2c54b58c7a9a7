"""Streamed Chat Completions (version 2): deltas assembled into the same evidence as a
plain answer, on MockTransport; and real loopback agents, plain and streamed,
hostile and honest, through the CLI."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_agent import DONE, FakeAgent, RawServer, delta, event, raw_agent
from helpers import PLAIN, SCENARIOS, chat_or_stream, contract, run, verdicts
from mock_transport import MockTransport

from behavegate.errors import ContractError
from behavegate.evidence.chat import EndpointError, build_request, encode_request, normalize
from behavegate.evidence.chat_stream import Assembly
from behavegate.evidence.transport import Exchange, ResponseTooLarge, new_client, post_chat, request_headers

SSE = {"Content-Type": "text/event-stream; charset=utf-8"}


def split_calls_stream() -> bytes:
    """Two tool calls whose argument fragments interleave, then usage after finish_reason."""
    return b"".join(
        [
            delta({"role": "assistant", "content": "Look"}),
            delta({"content": "ing up"}),
            delta(
                {"tool_calls": [{"index": 0, "id": "c0", "type": "function", "function": {"name": "lookup", "arguments": ""}}]}
            ),
            delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"order'}}]}),
            delta(
                {
                    "tool_calls": [
                        {"index": 1, "id": "c1", "type": "function", "function": {"name": "refund", "arguments": '{"am'}}
                    ]
                }
            ),
            delta({"tool_calls": [{"index": 0, "function": {"arguments": '": "A-1"}'}}]}),
            delta({"tool_calls": [{"index": 1, "function": {"arguments": 'ount": 5}'}}]}),
            delta({}, "tool_calls"),
            event({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}),
            DONE,
        ]
    )


def chat(body: bytes, headers: dict[str, str] | None = None, events: bool = True, pieces: int = 0) -> tuple[Any, int]:
    """post_chat against a MockTransport answering ``body`` (in ``pieces``-byte reads when set)."""

    def handler(request: httpx.Request) -> httpx.Response:
        stream = [body[i : i + pieces] for i in range(0, len(body), pieces)] if pieces else [body]
        return httpx.Response(200, headers=headers or SSE, stream=_Pieces(stream))

    async def go() -> tuple[Any, int]:
        exchange = Exchange(
            "http://agent.test/v1/chat/completions",
            encode_request({"x": 1}),
            request_headers(None, None, "t"),
            time.monotonic() + 5,
        )
        async with MockTransport(handler) as client:
            return await post_chat(client, exchange, events)

    return asyncio.run(go())


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> Any:
        for piece in self.pieces:
            yield piece


# --- assembly (no network) -----------------------------------------------------------


@pytest.mark.parametrize("pieces", [0, 1, 7, 64])
def test_split_tool_call_arguments_assemble_by_index_into_the_plain_answer(pieces: int) -> None:
    body = split_calls_stream()
    raw, size = chat(body, pieces=pieces)
    assert size == len(body)
    assert normalize(raw, "s", "none") == normalize(PLAIN, "s", "none")
    observation = normalize(raw, "s")
    assert [(c.name, c.arguments) for c in observation.tool_calls or ()] == [
        ("lookup", {"order": "A-1"}),
        ("refund", {"amount": 5}),
    ]
    assert observation.total_tokens == 7 and observation.finish_reason == "tool_calls"
    assert [c["id"] for c in raw["choices"][0]["message"]["tool_calls"]] == ["c0", "c1"]  # sent back next turn


def test_crlf_line_ends_comments_and_multi_line_data_are_read_as_the_event_stream_format() -> None:
    body = (
        b': keep-alive\r\n\r\nevent: message\r\nid: 1\r\ndata: {"choices": [{"index": 0,\r\n'
        b'data: "delta": {"content": "hi"}, "finish_reason": "stop"}]}\r\n\r\ndata: [DONE]\r\n\r\n'
    )
    raw, _ = chat(body, pieces=3)
    observation = normalize(raw, "s")
    assert observation.response == "hi" and observation.response_complete is True
    assert observation.tool_calls is None  # no tool_calls delta: unobserved, as a plain answer without the key


def test_without_a_usage_chunk_tokens_are_unobserved() -> None:
    raw, _ = chat(delta({"content": "ok"}, "stop") + DONE)
    assert normalize(raw, "s").total_tokens is None


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (delta({"content": "cut"}), "agent endpoint stream ended before [DONE]"),
        (delta({"content": "cut"}, "stop"), "agent endpoint stream ended before [DONE]"),
        (delta({"content": "no reason"}) + DONE, "agent endpoint stream ended without a finish_reason"),
        (
            delta({"content": "a"}) + b"data: {not json\n\n" + delta({}, "stop") + DONE,
            "agent endpoint stream chunk 2 is not valid JSON",
        ),
        (delta({"content": "a"}) + b'data: {"a": NaN}\n\n' + DONE, "agent endpoint stream chunk 2 is not valid JSON"),
        (b"data: [1]\n\n" + DONE, "agent endpoint stream chunk 1 must be an object"),
        (event({"error": {"message": "overloaded"}}) + DONE, "agent endpoint stream reported an error at chunk 1"),
        (b"", "agent endpoint stream ended before [DONE]"),
    ],
)
def test_a_stream_that_cannot_be_trusted_to_have_finished_is_an_endpoint_error(body: bytes, reason: str) -> None:
    with pytest.raises(EndpointError) as error:
        chat(body)
    assert str(error.value) == reason


def test_a_field_of_the_wrong_type_breaks_only_its_own_evidence() -> None:
    raw, _ = chat(delta({"content": "fine"}) + delta({"tool_calls": [{"function": {"name": "x"}}]}, "stop") + DONE)
    observation = normalize(raw, "s")
    assert observation.response == "fine" and observation.response_complete is True
    assert observation.tool_calls is None and observation.tool_calls_complete is False


def test_the_chunk_cap_stops_a_stream_of_tiny_events() -> None:
    assembly = Assembly(max_chunks=3)
    with pytest.raises(EndpointError, match="exceeds 3 chunks"):
        assembly.feed(delta({"content": "a"}) * 4)


def test_reading_stops_at_done_and_ignores_what_follows() -> None:
    answer = delta({"content": "ok"}, "stop") + DONE
    raw, size = chat(answer + b"data: {garbage\n\n" * 1000, pieces=len(answer))
    assert normalize(raw, "s").response == "ok" and size == len(answer)  # the read after [DONE] never happens


def test_a_stream_past_the_byte_cap_is_too_large() -> None:
    with pytest.raises(ResponseTooLarge):
        chat(delta({"content": "x" * 60_000}) * 40)  # ~2.4 MB > 2 MiB


def test_version_1_reads_an_event_stream_as_json_as_skylos_does() -> None:
    with pytest.raises(EndpointError, match="agent endpoint returned invalid JSON"):
        chat(delta({"content": "ok"}, "stop") + DONE, events=False)


def test_a_json_answer_is_read_as_json_whatever_was_asked() -> None:
    raw, _ = chat(json.dumps(PLAIN).encode(), {"Content-Type": "application/json"})
    assert raw == PLAIN


# --- the contract key -------------------------------------------------------------------

STREAMING = """version: 2
agent:
  model: m
  stream: true
scenarios:
  - {id: s, prompt: hi, expect: {refusal: false}}
"""


def test_agent_stream_asks_for_a_stream_with_usage() -> None:
    parsed = contract(STREAMING)
    request = build_request(parsed.agent, parsed.scenarios[0], 8)
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    own = contract(STREAMING.replace("  stream: true\n", "  stream: true\n  parameters: {stream_options: {}}\n"))
    assert build_request(own.agent, own.scenarios[0], 8)["stream_options"] == {}
    plain = contract(STREAMING.replace("  stream: true\n", ""))
    request = build_request(plain.agent, plain.scenarios[0], 8)
    assert request["stream"] is False and "stream_options" not in request


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        (STREAMING.replace("stream: true", "stream: yes please"), "agent.stream", "agent.stream must be true or false"),
        (STREAMING.replace("version: 2", "version: 1"), "agent.stream", "agent.stream"),
    ],
)
def test_agent_stream_problems_name_path_and_line(text: str, path: str, message: str) -> None:
    with pytest.raises(ContractError) as error:
        contract(text)
    problem = next(p for p in error.value.problems if message in p.text)
    assert problem.path == path and problem.line == 4


# --- real loopback agents through the CLI ------------------------------------------------


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the project root the CLI reads the contract from


def test_a_streaming_agent_gets_the_verdicts_of_the_same_agent_answering_plain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeAgent(chat_or_stream) as agent:
        plain_code, plain = run(tmp_path, SCENARIOS.format(timeout=10, stream=""), agent.url, capsys)
        stream_code, streamed = run(tmp_path, SCENARIOS.format(timeout=10, stream="  stream: true\n"), agent.url, capsys)
    assert sorted(r["stream"] for r in agent.bodies) == [False] * 5 + [True] * 5
    assert plain_code == stream_code == 1
    assert verdicts(streamed) == verdicts(plain)
    assert [s["status"] for s in streamed["scenarios"]] == ["pass", "pass", "fail", "pass"]
    # The streamed assistant turn goes back as the agent streamed it: its call id answers the tool message.
    second = next(r for r in agent.bodies if r["stream"] and r["messages"][-1]["role"] == "tool")
    assistant, tool = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] == "k1"
    assert assistant["tool_calls"][0]["function"] == {"name": "lookup", "arguments": '{"order": "B-2"}'}


# --- hostile streams, on a raw loopback socket ---------------------------------------------


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def hostile(connection: socket.socket, body: bytes) -> None:
    prompt = json.loads(body)["messages"][-1]["content"]
    if prompt == "honest":
        connection.sendall(HEAD + delta({"content": "fine"}, "stop") + DONE)
    elif prompt == "trickle":  # a chunk every 0.2 s, forever
        connection.sendall(HEAD)
        while True:
            connection.sendall(delta({"content": "."}))
            time.sleep(0.2)
    elif prompt == "no-done":  # finishes, then closes without [DONE]
        connection.sendall(HEAD + delta({"content": "fine"}, "stop"))
    elif prompt == "hangs-after":  # finishes, then holds the connection open without [DONE]
        connection.sendall(HEAD + delta({"content": "fine"}, "stop"))
        time.sleep(30)
    elif prompt == "huge":  # 100 MB of deltas
        connection.sendall(HEAD)
        piece = delta({"content": "x" * 1000}) * 100  # ~100 kB
        for _ in range(1000):
            connection.sendall(piece)
    elif prompt == "bad-json":
        connection.sendall(HEAD + delta({"content": "a"}) + b'data: {"choices": [\n\n' + delta({}, "stop") + DONE)


HOSTILE = """version: 2
agent:
  model: m
  timeout_seconds: 1.5
  stream: true
scenarios:
""" + "".join(
    f"  - {{id: {name}, prompt: {name}, expect: {{response: {{contains: [fine]}}}}}}\n"
    for name in ("honest", "trickle", "no-done", "hangs-after", "huge", "bad-json")
)


def test_hostile_streams_are_bounded_and_incomplete_with_a_reason_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with raw_agent(hostile) as agent:
        code, report = run(tmp_path, HOSTILE, agent.url, capsys, "--concurrency", "6")
    assert code == 2
    errors = {s["id"]: (s["status"], s["attempts"][0]["observation"]["error"]) for s in report["scenarios"]}
    assert errors == {
        "honest": ("pass", None),
        "trickle": ("incomplete", "agent endpoint exceeded request deadline"),
        "no-done": ("incomplete", "agent endpoint stream ended before [DONE]"),
        "hangs-after": ("incomplete", "agent endpoint exceeded request deadline"),
        "huge": ("incomplete", "agent endpoint response is too large"),
        "bad-json": ("incomplete", "agent endpoint stream chunk 2 is not valid JSON"),
    }
    # The trickle and the stream that never ends came back, each cut by its deadline (no clock asserted).


# --- a kept-alive streaming agent: the connection carries the next request -------------


class KeptAlive(RawServer):
    """A loopback agent that streams chunked SSE on kept-alive connections. After
    ``[DONE]`` it sends the body's last chunk, unless the prompt is "lingers": then it
    holds the body open until the client closes the connection. ``asked_on``: the client
    port of each request's connection (one opened ahead and never used asks nothing)."""

    def __init__(self) -> None:
        self.asked_on: list[int] = []
        super().__init__()

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        self.asked_on.append(connection.getpeername()[1])
        prompt = json.loads(body)["messages"][-1]["content"]
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for part in (delta({"content": "fine"}, "stop"), DONE):
            connection.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        if prompt == "lingers":
            while connection.recv(65536):  # until the client closes it
                pass
            return False
        connection.sendall(b"0\r\n\r\n")
        return True


def kept_alive_contract(*prompts: str) -> str:
    lines = "".join(f"  - {{id: s{i}, prompt: {p}, expect: {{response: {{contains: [fine]}}}}}}\n" for i, p in enumerate(prompts))
    return f"version: 2\nagent: {{model: m, stream: true, missing_tool_calls: none, timeout_seconds: 20}}\nscenarios:\n{lines}"


def test_a_finished_stream_leaves_its_connection_for_the_same_clients_next_request() -> None:
    agent = KeptAlive()

    async def ask_six() -> list[Any]:
        body = encode_request({"model": "m", "stream": True, "messages": [{"role": "user", "content": "ends"}]})
        async with new_client(1) as client:
            deadline = asyncio.get_running_loop().time() + 10
            return [(await post_chat(client, Exchange(agent.url, body, {}, deadline), True))[0] for _ in range(6)]

    try:
        answers = asyncio.run(ask_six())
    finally:
        agent.close()
    assert [normalize(raw, "s").response for raw in answers] == ["fine"] * 6
    assert agent.connections == 1  # was one a request: the stream was closed at [DONE], before its last chunk
    assert len(set(agent.asked_on)) == 1


def test_each_attempt_has_connections_of_its_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An answer meant for one attempt can never be read by another (HTTP/1.1 has no correlation)."""
    agent = KeptAlive()
    try:
        code, report = run(tmp_path, kept_alive_contract(*["ends"] * 6), agent.url, capsys, "--concurrency", "1")
    finally:
        agent.close()
    assert code == 0 and [s["status"] for s in report["scenarios"]] == ["pass"] * 6
    assert len(agent.asked_on) == len(set(agent.asked_on)) == 6  # (and one more opened ahead may never be used)


def test_a_stream_held_open_after_done_is_a_complete_answer_on_a_closed_connection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = KeptAlive()
    try:
        code, report = run(tmp_path, kept_alive_contract("lingers", "lingers", "ends"), agent.url, capsys, "--concurrency", "1")
    finally:
        agent.close()
    assert code == 0 and [s["status"] for s in report["scenarios"]] == ["pass"] * 3  # never the 20 s deadline
    assert len(agent.asked_on) == len(set(agent.asked_on)) == 3  # a body that did not end is never reused
