"""A response is bounded on its raw bytes and never holds the event loop (issue 36, item 3):
real loopback servers send what a hostile agent would, and the run's honest scenarios go on."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from fake_agent import RawServer
from helpers import SHRINK, steepness

from behavegate.cli import main
from behavegate.evidence.chat import EndpointError
from behavegate.evidence.chat_stream import Assembly
from behavegate.evidence.transport import Exchange, new_client, post, post_chat

CHUNKED_STREAM = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
LONG_LINE = 300_000  # one SSE line this long, a byte a chunk: 1.8 MB on the wire, past RESPONSE_MAX_PIECES


def one_byte_chunks(data: bytes) -> bytes:
    return b"".join(b"1\r\n%s\r\n" % data[i : i + 1] for i in range(len(data)))


def honest_stream() -> bytes:
    events = [
        {"choices": [{"index": 0, "delta": {"content": "fine"}, "finish_reason": "stop"}]},
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(event).encode() for event in events) + b"data: [DONE]\n\n"
    return CHUNKED_STREAM + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


class Hostile(RawServer):
    """Streams one endless SSE line a byte a chunk to a prompt saying "long"; answers any other
    at once. Each connection is closed after its answer (the client closes a hostile one first)."""

    long_line = one_byte_chunks(b"data: " + b"x" * LONG_LINE)

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        prompt = json.loads(body)["messages"][-1]["content"]
        connection.sendall(CHUNKED_STREAM + self.long_line if prompt == "long" else honest_stream())
        return False


def test_a_long_line_in_one_byte_chunks_never_holds_the_event_loop() -> None:
    """It used to hold the loop for seconds (the chunk reader never yielded while bytes were
    buffered, and the assembler re-copied the unfinished line on every read)."""
    server = Hostile()

    async def main_() -> tuple[str, float]:
        gaps: list[float] = []
        done = asyncio.Event()

        async def tick() -> None:
            last = time.monotonic()
            while not done.is_set():
                await asyncio.sleep(0.001)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        ticker = asyncio.create_task(tick())
        body = (b'{"messages": [{"role": "user", "content": "long"}]}',)
        async with new_client(1) as client:
            try:
                await post_chat(client, Exchange(server.url, body, {}, asyncio.get_running_loop().time() + 60), True)
                outcome = "answered"
            except EndpointError as error:
                outcome = str(error)
        done.set()
        await ticker
        return outcome, max(gaps)

    try:
        outcome, longest = asyncio.run(main_())
    finally:
        server.close()
    assert outcome.startswith("agent endpoint response is too large")
    assert longest < 0.5  # a few ms as measured alone; this bound leaves room for a loaded machine


def test_honest_scenarios_are_all_sent_while_two_long_lines_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two such streams and 30 honest scenarios under --max-seconds 8: 24 honest ones were never sent."""
    monkeypatch.chdir(tmp_path)  # the project root the CLI reads the contract from
    server = Hostile()
    prompts = ["long", "long"] + ["hello"] * 30
    lines = "".join(
        f"  - {{id: s{i:02}, prompt: {p}, expect: {{response: {{contains: [fine]}}}}}}\n" for i, p in enumerate(prompts)
    )
    (tmp_path / "c.yml").write_text(f"version: 2\nagent: {{model: m, stream: true, timeout_seconds: 30}}\nscenarios:\n{lines}")
    try:
        options = ["--concurrency", "4", "--max-seconds", "8", "--max-scenarios", "32", "--no-artifacts", "--format", "json"]
        code = main(["test", "c.yml", "--endpoint", server.url, *options])
    finally:
        server.close()
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    statuses = {s["id"]: s["status"] for s in report["scenarios"]}
    assert code == 2  # every honest one sent and judged within --max-seconds, or it would be "not sent"
    assert statuses["s00"] == statuses["s01"] == "incomplete"
    assert [status for id_, status in statuses.items() if id_ not in ("s00", "s01")] == ["pass"] * 30


class EmptyGzipMembers(RawServer):
    """A gzip body that never ends: empty members, one after another (each decodes to nothing)."""

    member = zlib.compressobj(wbits=31).flush()

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n\r\n")
        block = self.member * 4096
        while True:
            connection.sendall(block)


def test_endless_empty_gzip_members_are_capped_by_their_raw_bytes() -> None:
    """Only the decoded bytes were counted: nothing stopped the stream but the deadline (17 s of CPU)."""
    server = EmptyGzipMembers()

    async def ask() -> float:
        started = time.process_time()
        async with new_client(1) as client:
            with pytest.raises(EndpointError, match="agent endpoint response is too large"):
                await post(client, Exchange(server.url, (b"{}",), {}, asyncio.get_running_loop().time() + 60))
        return time.process_time() - started

    try:
        cpu = asyncio.run(ask())
    finally:
        server.close()
    assert cpu < 10  # the cap is 2 MiB of raw bytes: about 100,000 members (~0.3 s here, alone)


def test_stream_assembly_is_linear_in_the_bytes_received() -> None:
    """A 1.9 MB line in 64-byte pieces took 16 s of CPU: each read re-copied the unfinished line."""

    def assemble(size: int) -> Any:
        def work() -> None:
            assembly = Assembly()
            line = b"data: " + b"x" * size
            for start in range(0, len(line), 64):
                assembly.feed(line[start : start + 64])

        return work

    grown, how = steepness(assemble(1_900_000), assemble(1_900_000 // SHRINK))
    assert grown < 3 * SHRINK, how
