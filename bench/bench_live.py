"""Benchmark behavegate's live mode against a loopback agent that is slow on purpose (stdlib only).

Run from the repository root:

    .venv/bin/python bench/bench_live.py [--delay S] [--repeat K] [--no-skylos] [--concurrency-sweep] [--profile]

The script starts its own OpenAI-compatible agent in this process: an asyncio
HTTP/1.1 server on 127.0.0.1 (any free port). It runs in a background thread
with its own event loop. Every POST /v1/chat/completions is answered after
``--delay`` seconds with ``ok <prompt>``. The script then runs

    behavegate test contract.yml --endpoint URL --concurrency 16 --max-scenarios 200
        --no-artifacts --format json --output out.json

K times as a subprocess, with the temporary directory as cwd, and compares the
median wall time with the ideal ``ceil(200 / 16) * delay``. It then runs
``skylos agent test`` once the same way (skylos is sequential, so this takes
about 200 * delay seconds) and checks that both tools give the same verdicts.

Every number printed is measured in this run, on this machine.

Exit status: 0 unless the two tools disagree on a verdict (exit code, run status
or a per-scenario status). Then a line starting with ``MISMATCH`` is printed and
the exit status is 1. It is 2 (with a line starting with ``ERROR``) when a timed
behavegate run did not judge all 200 scenarios live, so nothing was measured.
Missing the speed target does not change the exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import math
import os
import pstats
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_BEHAVEGATE = REPO / ".venv" / "bin" / "behavegate"
DEFAULT_SKYLOS = Path("/tmp/sky/bin/skylos")

N_SCENARIOS = 200
CONCURRENCY = 16
TARGET_RATIO = 1.5
FLOOR_RATIO = 1.1  # the speed promise: behavegate's wall time within 1.1x the bare asyncio client's
# A version-1 contract holds at most 250 assertions (skylos's cap, which --max-assertions does not
# lift), before its 1,000-scenario cap; version 2 allows 250,000 and 100,000 scenarios.
V1_MAX_ASSERTIONS = 250
SWEEP = (1, 4, 16, 32)
MAX_REQUEST_BYTES = 4 * 1024 * 1024

# ---------------------------------------------------------------------------
# The loopback agent
# ---------------------------------------------------------------------------

REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 413: "Payload Too Large"}


class LoopbackAgent:
    """A keep-alive HTTP/1.1 chat-completions server on its own event loop in a daemon thread."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="bench-live-agent", daemon=True)
        self.port = 0
        self.requests = 0  # POST /v1/chat/completions answered since the last reset()
        self.connections = 0  # TCP connections accepted since the last reset()
        self.in_flight = 0
        self.peak_in_flight = 0
        self._ready = threading.Event()
        self._server: asyncio.Server | None = None
        self._error: BaseException | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> str:
        self.thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise RuntimeError(f"loopback agent failed to start: {self._error}")
        if not self.port:
            raise RuntimeError("loopback agent did not start within 10 s")
        return f"http://127.0.0.1:{self.port}/v1/chat/completions"

    def stop(self) -> None:
        async def _close() -> None:
            if self._server is not None:
                self._server.close()
                with suppress(Exception):
                    await asyncio.wait_for(self._server.wait_closed(), 2)

        with suppress(Exception):
            asyncio.run_coroutine_threadsafe(_close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    def reset(self) -> None:
        """Zero the counters (called between runs; counters are only touched on the agent loop)."""

        async def _reset() -> None:
            self.requests = 0
            self.connections = 0
            self.peak_in_flight = self.in_flight

        asyncio.run_coroutine_threadsafe(_reset(), self.loop).result(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self._server = self.loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=256, limit=64 * 1024)
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # reported by start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self.loop.run_forever()
        # drain what is left so the loop closes cleanly
        with suppress(Exception):
            pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
            for task in pending:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()

    # -- HTTP --------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                parts = lines[0].split(" ")
                if len(parts) != 3:
                    await self._reply(writer, 400, b'{"error":"bad request line"}', close=True)
                    return
                method, target, version = parts
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if not line:
                        continue
                    name, sep, value = line.partition(":")
                    if not sep:
                        await self._reply(writer, 400, b'{"error":"bad header"}', close=True)
                        return
                    headers[name.strip().lower()] = value.strip()
                connection = headers.get("connection", "").lower()
                close = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    body = await self._read_chunked(reader)
                    if body is None:
                        await self._reply(writer, 400, b'{"error":"bad chunked body"}', close=True)
                        return
                else:
                    try:
                        length = int(headers.get("content-length", "0") or "0")
                    except ValueError:
                        await self._reply(writer, 400, b'{"error":"bad content-length"}', close=True)
                        return
                    if length < 0 or length > MAX_REQUEST_BYTES:
                        await self._reply(writer, 413, b'{"error":"request too large"}', close=True)
                        return
                    try:
                        body = await reader.readexactly(length) if length else b""
                    except (asyncio.IncompleteReadError, ConnectionError):
                        return
                path = target.split("?", 1)[0]
                if path != "/v1/chat/completions":
                    await self._reply(writer, 404, b'{"error":"not found"}', close=close)
                elif method != "POST":
                    await self._reply(writer, 405, b'{"error":"method not allowed"}', close=close)
                else:
                    self.in_flight += 1
                    self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
                    try:
                        if self.delay > 0:
                            await asyncio.sleep(self.delay)
                        prompt, stream, usage = parse_request(body)
                    finally:
                        self.in_flight -= 1
                    self.requests += 1
                    if stream:
                        await self._reply_stream(writer, stream_events(prompt, usage=usage), close=close)
                    else:
                        await self._reply(writer, 200, completion(prompt), close=close)
                if close:
                    return
        except ConnectionError:
            return
        finally:
            with suppress(Exception):
                writer.close()
                await writer.wait_closed()

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes | None:
        chunks: list[bytes] = []
        total = 0
        try:
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    # trailers up to the blank line
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_REQUEST_BYTES:
                    return None
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            return None

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, status: int, body: bytes, *, close: bool) -> None:
        head = (
            f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"Connection: {'close' if close else 'keep-alive'}\r\n"
            "\r\n"
        ).encode("ascii")
        writer.write(head + body)  # one write: headers and body in one segment
        await writer.drain()

    @staticmethod
    async def _reply_stream(writer: asyncio.StreamWriter, events: list[bytes], *, close: bool) -> None:
        """A 200 ``text/event-stream`` answer, chunked, one write (and one HTTP chunk) per event."""
        head = (
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream\r\n"
            "Cache-Control: no-cache\r\n"
            "Transfer-Encoding: chunked\r\n"
            f"Connection: {'close' if close else 'keep-alive'}\r\n"
            "\r\n"
        ).encode("ascii")
        for i, event in enumerate(events):
            chunk = f"{len(event):x}\r\n".encode("ascii") + event + b"\r\n"
            writer.write(head + chunk if i == 0 else chunk)
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def parse_request(body: bytes) -> tuple[str, bool, bool]:
    """(last user prompt, "stream": true asked, stream_options.include_usage asked) of a request body."""
    prompt, stream, usage = "", False, False
    with suppress(ValueError, AttributeError, TypeError):
        request = json.loads(body)
        stream = request.get("stream") is True
        options = request.get("stream_options")
        usage = isinstance(options, dict) and options.get("include_usage") is True
        for message in reversed(request.get("messages") or []):
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    prompt = content
                elif isinstance(content, list):  # content parts
                    prompt = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
                break
    return prompt, stream, usage


STREAM_PIECES = 3  # content deltas per streamed answer


def stream_events(prompt: str, *, usage: bool) -> list[bytes]:
    """The streamed answer to ``prompt``: ``ok <prompt>`` in STREAM_PIECES chat.completion.chunk
    content deltas (as the plain answer's message says), a finish_reason chunk, a usage chunk if asked, then ``data: [DONE]``."""
    text = f"ok {prompt}"
    step = max(1, math.ceil(len(text) / STREAM_PIECES))
    pieces = [text[i : i + step] for i in range(0, len(text), step)] or [""]
    chunks: list[dict[str, Any]] = []
    for i, piece in enumerate(pieces):
        # the first delta says "refusal": null as OpenAI's does; without it refusal is unobserved
        delta: dict[str, Any] = {"role": "assistant", "content": piece, "refusal": None} if i == 0 else {"content": piece}
        chunks.append({"choices": [{"index": 0, "delta": delta}]})
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if usage:
        chunks.append({"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": 9, "total_tokens": 17}})
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "m"}
    events = [b"data: " + json.dumps({**base, **c}, separators=(",", ":")).encode("utf-8") + b"\n\n" for c in chunks]
    return [*events, b"data: [DONE]\n\n"]


def completion(prompt: str) -> bytes:
    """The chat completion answering ``prompt``: ``ok <prompt>``, with the fields a real server sends
    (inspect_ai refuses an answer without ``model``)."""
    reply = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "usage": {"prompt_tokens": 9, "completion_tokens": 9, "total_tokens": 18},
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": f"ok {prompt}", "tool_calls": [], "refusal": None},
            }
        ],
    }
    return json.dumps(reply, separators=(",", ":")).encode("utf-8")


# ---------------------------------------------------------------------------
# The contract
# ---------------------------------------------------------------------------


def build_contract(n: int, fail_every: int, *, version: int = 1, stream: bool = False) -> tuple[str, int]:
    """A contract with n one-assertion scenarios and no endpoint; returns (YAML, planned failures).

    Version 1 (skylos's format, at most 250 assertions) unless ``version`` is 2;
    ``stream`` (version 2 only) asks for streamed answers. A streamed answer without a
    tool_calls delta has no tool_calls key, so the streamed contract says
    ``missing_tool_calls: none`` to judge ``tools.max_calls`` as the plain one does.

    Kinds in turn: tools.max_calls 0, response.contains "ok", response.contains the
    scenario's own prompt words (checks that each answer belongs to its request),
    response.excludes, refusal false. Every ``fail_every``-th scenario instead asks
    for a word the agent never says (0 = no planned failures).
    """
    out = ["# generated by bench/bench_live.py", f"version: {version}", "agent:", "  model: m"]
    if stream:
        out += ["  stream: true", "  missing_tool_calls: none"]
    out.append("scenarios:")
    planned_fail = 0
    for i in range(n):
        sid = f"s{i:04d}"
        out.append(f"  - id: {sid}")
        out.append(f"    prompt: {json.dumps(f'Please check scenario {sid} for me.')}")
        out.append("    expect:")
        if fail_every and i % fail_every == fail_every - 1:
            planned_fail += 1
            out.append(f"      response: {{contains: [{json.dumps(f'NEVER-{i:04d}')}]}}")
            continue
        kind = i % 5
        if kind == 0:
            out.append("      tools: {max_calls: 0}")
        elif kind == 1:
            out.append('      response: {contains: ["ok"]}')
        elif kind == 2:
            out.append(f"      response: {{contains: [{json.dumps(f'scenario {sid}')}]}}")
        elif kind == 3:
            out.append('      response: {excludes: ["LEAK"]}')
        else:
            out.append("      refusal: false")
    return "\n".join(out) + "\n", planned_fail


# ---------------------------------------------------------------------------
# Running and comparing
# ---------------------------------------------------------------------------

CHILD_ENV: dict[str, str] | None = None  # set in main(); None = inherit


class Run:
    def __init__(
        self,
        wall: float,
        rc: int,
        report: dict[str, Any] | None,
        stdout: bytes,
        stderr: bytes,
        served: int,
        peak: int,
        conns: int,
        cpu: float | None = None,
    ) -> None:
        self.wall = wall
        self.cpu = cpu  # user+system CPU seconds of the child process (None where unmeasurable)
        self.rc = rc
        self.report = report
        self.stdout = stdout
        self.stderr = stderr
        self.served = served
        self.peak = peak
        self.conns = conns

    @property
    def duration_ms(self) -> float | None:
        harness = (self.report or {}).get("harness")
        value = harness.get("duration_ms") if isinstance(harness, dict) else None
        return float(value) if isinstance(value, (int, float)) else None

    def short_error(self) -> str:
        if self.report is not None and "error" in self.report:
            return repr(self.report.get("error"))
        text = (self.stderr or self.stdout).decode("utf-8", "replace").strip().splitlines()
        return repr(text[-1][:300]) if text else "(no output)"


def _children_cpu() -> float | None:
    try:
        import resource
    except ImportError:  # not on Unix
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def spawn(cmd: list[str], cwd: Path, agent: LoopbackAgent) -> tuple[subprocess.CompletedProcess[bytes], float, float | None]:
    """Run one child to completion: (process, wall seconds, child CPU seconds)."""
    agent.reset()
    cpu0 = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env=CHILD_ENV)
    wall = time.perf_counter() - start
    cpu1 = _children_cpu()
    return proc, wall, (cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None)


def run_cli(cmd: list[str], cwd: Path, agent: LoopbackAgent) -> Run:
    out = cwd / "out.json"
    with suppress(FileNotFoundError):
        out.unlink()
    proc, wall, cpu = spawn(cmd, cwd, agent)
    report: dict[str, Any] | None = None
    raw = out.read_bytes() if out.exists() else proc.stdout
    with suppress(ValueError):
        parsed = json.loads(raw)
        if isinstance(parsed, dict):
            report = parsed
    return Run(
        wall, proc.returncode, report, proc.stdout, proc.stderr, agent.requests, agent.peak_in_flight, agent.connections, cpu
    )


def complete(run: Run) -> bool:
    """A run that judged every scenario from a live answer (a report with N scenarios, N requests served)."""
    if run.report is None or "error" in run.report:
        return False
    scenarios = run.report.get("scenarios")
    return isinstance(scenarios, list) and len(scenarios) == N_SCENARIOS and run.served == N_SCENARIOS


def verdicts(run: Run) -> dict[str, Any]:
    if run.report is None:
        return {"unparseable": run.short_error()}
    if "error" in run.report:
        return {"error": run.report.get("error"), "status": run.report.get("status")}
    return {
        "status": run.report.get("status"),
        "scenarios": [(s.get("id"), s.get("status")) for s in run.report.get("scenarios", [])],
    }


def compare(bg: Run, sk: Run) -> list[str]:
    problems: list[str] = []
    if bg.rc != sk.rc:
        problems.append(f"MISMATCH: exit code behavegate={bg.rc} skylos={sk.rc}")
    a, b = verdicts(bg), verdicts(sk)
    if "unparseable" in a or "unparseable" in b:
        problems.append(f"MISMATCH: no JSON report (behavegate={a.get('unparseable')} skylos={b.get('unparseable')})")
        return problems
    if ("error" in a) != ("error" in b) or a.get("status") != b.get("status"):
        problems.append(
            f"MISMATCH: run status behavegate={a.get('status')!r}/{a.get('error')!r} skylos={b.get('status')!r}/{b.get('error')!r}"
        )
        return problems
    if "error" in a:
        return problems
    sa, sb = a["scenarios"], b["scenarios"]
    if sa != sb:
        diff = [(x, y) for x, y in zip(sa, sb, strict=False) if x != y][:5]
        extra = f" (counts {len(sa)} vs {len(sb)})" if len(sa) != len(sb) else ""
        problems.append(f"MISMATCH: per-scenario statuses differ{extra}; first differences (behavegate, skylos): {diff}")
    return problems


def summary_of(run: Run) -> str:
    if run.report is None:
        return f"no report: {run.short_error()}"
    if "error" in run.report:
        return f"error {run.report.get('error')!r}"
    counts: dict[str, int] = {}
    for s in run.report.get("scenarios", []):
        counts[str(s.get("status"))] = counts.get(str(s.get("status")), 0) + 1
    return f"status={run.report.get('status')!r} scenarios={dict(sorted(counts.items()))}"


def fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


# ---------------------------------------------------------------------------
# Reference clients ("floors"), run as subprocesses like the CLIs
# ---------------------------------------------------------------------------

# A minimal stdlib client: C keep-alive connections, one request in flight on each,
# N requests in all. It shows what this agent and this machine allow right now.
FLOOR_STDLIB = r"""
import asyncio, json, sys, time
url, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
host_port, path = url.split("//", 1)[1].split("/", 1)
host, port = host_port.rsplit(":", 1)
async def worker(queue):
    reader, writer = await asyncio.open_connection(host, int(port))
    while True:
        try:
            i = queue.get_nowait()
        except asyncio.QueueEmpty:
            break
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"Please check scenario s{i:04d} for me."}]}).encode()
        writer.write((f"POST /{path} HTTP/1.1\r\nHost: {host_port}\r\nContent-Type: application/json\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        head = await reader.readuntil(b"\r\n\r\n")
        length = int([l for l in head.decode().split("\r\n") if l.lower().startswith("content-length:")][0].split(":")[1])
        json.loads(await reader.readexactly(length))
    writer.close()
async def main():
    queue = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(queue) for _ in range(c)))
    print(int((time.perf_counter() - t0) * 1000))
asyncio.run(main())
"""

# The same loop with httpx.AsyncClient and an asyncio.Semaphore (how behavegate's
# live mode was built before its own transport, now evidence/h11_transport.py),
# without behavegate. Needs the behavegate venv's interpreter.
FLOOR_HTTPX = r"""
import asyncio, json, sys, time
import httpx
url, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
async def main():
    gate = asyncio.Semaphore(c)
    limits = httpx.Limits(max_connections=c, max_keepalive_connections=c)
    async with httpx.AsyncClient(trust_env=False, limits=limits, timeout=300) as client:
        async def one(i):
            async with gate:
                body = {"model": "m", "messages": [{"role": "user", "content": f"Please check scenario s{i:04d} for me."}]}
                r = await client.post(url, json=body)
                r.json()
        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        print(int((time.perf_counter() - t0) * 1000))
asyncio.run(main())
"""


# The stdlib client asking for streamed answers: the same C keep-alive connections,
# each response's whole chunked SSE body read, every event json.loads-ed and the
# content deltas joined, up to data: [DONE] and the last chunk.
FLOOR_STDLIB_STREAM = r"""
import asyncio, json, sys, time
url, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
host_port, path = url.split("//", 1)[1].split("/", 1)
host, port = host_port.rsplit(":", 1)
async def worker(queue):
    reader, writer = await asyncio.open_connection(host, int(port))
    while True:
        try:
            i = queue.get_nowait()
        except asyncio.QueueEmpty:
            break
        body = json.dumps({"model": "m", "stream": True, "stream_options": {"include_usage": True},
                           "messages": [{"role": "user", "content": f"Please check scenario s{i:04d} for me."}]}).encode()
        writer.write((f"POST /{path} HTTP/1.1\r\nHost: {host_port}\r\nContent-Type: application/json\r\n"
                      f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
        head = (await reader.readuntil(b"\r\n\r\n")).decode().lower()
        assert "transfer-encoding: chunked" in head and "text/event-stream" in head, head
        buf, text, done = b"", [], False
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            buf += (await reader.readexactly(size + 2))[:-2]
            *events, buf = buf.split(b"\n\n")
            for event in events:
                data = event[len(b"data: "):]
                if data == b"[DONE]":
                    done = True
                    continue
                for choice in json.loads(data)["choices"]:
                    text.append(choice["delta"].get("content") or "")
        assert done and "".join(text).startswith("ok "), text
    writer.close()
async def main():
    queue = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(queue) for _ in range(c)))
    print(int((time.perf_counter() - t0) * 1000))
asyncio.run(main())
"""


def run_floor(python: str, code: str, url: str, concurrency: int, cwd: Path, agent: LoopbackAgent) -> Run:
    proc, wall, cpu = spawn([python, "-c", code, url, str(N_SCENARIOS), str(concurrency)], cwd, agent)
    report: dict[str, Any] | None = None
    with suppress(ValueError, IndexError):
        report = {"harness": {"duration_ms": int(proc.stdout.decode().strip().splitlines()[-1])}}
    return Run(
        wall, proc.returncode, report, proc.stdout, proc.stderr, agent.requests, agent.peak_in_flight, agent.connections, cpu
    )


def interpreter_of(script: str) -> str | None:
    """The python next to a console script (same venv), if there is one."""
    candidate = Path(script).parent / "python"
    return str(candidate) if candidate.exists() else None


PROFILE_CHILD = r"""
import cProfile, io, os, sys, time
from contextlib import redirect_stderr, redirect_stdout, suppress
from behavegate.cli import main
stats_path, argv = sys.argv[1], sys.argv[2:]
def once(prof):
    with suppress(FileNotFoundError):
        os.unlink("out.json")
    t0 = time.perf_counter()
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()), suppress(SystemExit):
        if prof is not None:
            prof.enable()
        try:
            main(argv)
        finally:
            if prof is not None:
                prof.disable()
    return time.perf_counter() - t0
warm = once(None)
prof = cProfile.Profile()
wall = once(prof)
prof.dump_stats(stats_path)
print(f"{warm:.6f} {wall:.6f}")
"""

# One behavegate run in a child process, its wall time split by phase: the request
# loop (evidence.live.observe) is what compares with the bare client's own loop; the
# rest (start-up, the contract, the report) is fixed per run whatever the agent does.
PHASES_CHILD = r"""
import time
t0 = time.perf_counter()
import io, json, sys
from contextlib import redirect_stderr, redirect_stdout, suppress
from behavegate.cli import main
from behavegate.commands import live_run
from behavegate.contract import load
from behavegate.evidence import live
imported = time.perf_counter() - t0
spent = {}
def timed(module, name, key):
    inner = getattr(module, name)
    def call(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - start
    setattr(module, name, call)
timed(load, "load_contract", "contract")
timed(live, "observe", "requests")
timed(live_run, "build_report", "report")
with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()), suppress(SystemExit):
    main(sys.argv[1:])
spent["imports"] = imported
spent["total"] = time.perf_counter() - t0
print(json.dumps(spent))
"""

PHASES = (
    ("imports", "imports (behavegate and its dependencies)"),
    ("contract", "contract read and checked"),
    ("requests", "the request loop (evidence.live.observe)"),
    ("report", "report built (judged once)"),
    ("rest", "the rest (options, rendering, writing, exit)"),
)


def phases_runs(
    python: str, argv: list[str], floor_code: str, url: str, workdir: Path, agent: LoopbackAgent, repeat: int
) -> None:
    """``repeat`` phase-timed behavegate runs, each followed by a bare client run."""
    rows: list[dict[str, float]] = []
    floor_loops: list[float] = []
    floor_walls: list[float] = []
    for _ in range(repeat):
        proc, wall, _cpu = spawn([python, "-c", PHASES_CHILD, *argv], workdir, agent)
        try:
            spent = json.loads(proc.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            print(f"phases failed (exit {proc.returncode}): {proc.stderr.decode('utf-8', 'replace').strip()[-300:]}")
            return
        spent["process"] = wall
        spent["rest"] = spent["total"] - sum(spent.get(k, 0.0) for k, _ in PHASES if k != "rest")
        rows.append(spent)
        floor = run_floor(sys.executable, floor_code, url, CONCURRENCY, workdir, agent)
        floor_walls.append(floor.wall)
        floor_loops.append((floor.duration_ms or 0.0) / 1000)
    med = {key: statistics.median(row.get(key, 0.0) for row in rows) for key in (*(k for k, _ in PHASES), "total", "process")}
    print()
    print(f"-- behavegate's wall time by phase, median of {repeat} runs in child processes, alternated with the bare client --")
    for key, label in PHASES:
        print(f"  {label:<48}{med[key]:>8.3f} s")
    print(f"  {'process start and exit (wall - the above)':<48}{med['process'] - med['total']:>8.3f} s")
    loop, floor_loop = med["requests"], statistics.median(floor_loops)
    print(f"  {'whole process':<48}{med['process']:>8.3f} s   bare client {statistics.median(floor_walls):.3f} s")
    if floor_loop:
        verdict = "OK" if loop / floor_loop <= FLOOR_RATIO else "MISSED"
        print(
            f"ratio of the request loops, behavegate/bare asyncio: {loop:.3f} / {floor_loop:.3f} s = {loop / floor_loop:.3f}"
            f"  {verdict} (target <= {FLOOR_RATIO})"
        )
        fixed = med["process"] - loop
        print(
            f"  fixed per run (everything but the loop): behavegate {fixed:.3f} s, bare client {statistics.median(floor_walls) - floor_loop:.3f} s"
        )


HTTP_LIBS = ("httpx", "httpcore", "h11", "anyio", "sniffio", "idna", "certifi")


def _origin(filename: str) -> str:
    f = filename.replace("\\", "/")
    if "/behavegate/" in f:
        return "behavegate"
    if any(f"/{lib}/" in f for lib in HTTP_LIBS):
        return "httpx/httpcore/h11/anyio"
    if "/asyncio/" in f or f.endswith(("/selectors.py", "/socket.py", "/ssl.py")):
        return "asyncio/selectors/ssl"
    if "yaml" in f:
        return "yaml"
    if f == "~" or f.startswith("<"):
        return "builtins"
    return "other stdlib/python"


def profile_child(python: str, workdir: Path, url: str, agent: LoopbackAgent, top: int) -> None:
    """cProfile one ``behavegate.cli.main([...])`` run, in a child process, against the same agent.

    The child imports behavegate and calls ``cli.main`` in-process (one unprofiled
    warm-up run, then the profiled run). Being a separate process, it does not
    share a GIL with the agent thread, so socket calls are not inflated by GIL
    hand-offs to the agent.
    """
    argv = [
        "test", "contract.yml", "--endpoint", url, "--concurrency", str(CONCURRENCY), "--max-scenarios", str(N_SCENARIOS),
        "--no-artifacts", "--format", "json", "--output", "out.json",
    ]  # fmt: skip
    stats_path = workdir / "profile.pstats"
    proc, _wall, _cpu = spawn([python, "-c", PROFILE_CHILD, str(stats_path), *argv], workdir, agent)
    served, peak = agent.requests, agent.peak_in_flight
    if proc.returncode != 0 or not stats_path.exists():
        tail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()[-3:]
        print(f"\nprofile failed (exit {proc.returncode}): {tail}")
        return
    warm, wall = (float(x) for x in proc.stdout.decode().split()[-2:])
    ideal = math.ceil(N_SCENARIOS / CONCURRENCY) * agent.delay
    print()
    print(
        f"-- cProfile of behavegate.cli.main in a child process: warm-up run {warm:.3f} s, profiled run {wall:.3f} s"
        f" ({wall / ideal if ideal else 0:.2f}x ideal; profiler overhead included); served {served} requests over both calls,"
        f" peak in flight {peak} --"
    )
    stats = pstats.Stats(str(stats_path))
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    # own time by origin; a C builtin's own time goes to the origins of its callers
    buckets: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, tt, _ct, callers) in raw.items():
        origin = _origin(filename)
        if origin == "builtins" and func.startswith(
            ("<method 'poll' of 'select.", "<method 'select' of", "<method 'control' of")
        ):
            buckets["idle (waiting in the selector)"] = buckets.get("idle (waiting in the selector)", 0.0) + tt
            continue
        if origin == "builtins" and callers:
            weights = {k: (v[2] if isinstance(v, tuple) else 0.0) for k, v in callers.items()}
            total_w = sum(weights.values())
            for (cfile, _cl, _cf), w in weights.items():
                share = tt * (w / total_w if total_w else 1 / len(weights))
                key = _origin(cfile)
                buckets[key] = buckets.get(key, 0.0) + share
            continue
        buckets[origin] = buckets.get(origin, 0.0) + tt
    total = sum(buckets.values()) or 1.0
    print(
        "own time by origin (wall clock; C builtins charged to their callers): "
        + ", ".join(f"{k} {v * 1000:.0f} ms ({v / total:.0%})" for k, v in sorted(buckets.items(), key=lambda kv: -kv[1]))
    )
    tables: list[tuple[str, str | None, str]] = [
        ("tottime", None, f"top {top} by tottime"),
        ("cumulative", None, f"top {top} by cumulative"),
    ]
    tables.append(("tottime", r"/behavegate/", f"top {top} inside behavegate by tottime"))
    for order, restriction, title in tables:
        buf = io.StringIO()
        st = pstats.Stats(str(stats_path), stream=buf).sort_stats(order)
        if restriction:
            st.print_stats(restriction, top)
        else:
            st.print_stats(top)
        text = buf.getvalue()
        begin = text.find("   ncalls")
        print(f"\n{title}:")
        print(text[begin:].rstrip() if begin >= 0 else text.rstrip())


def print_floor_ratio(
    label: str, bg_runs: list[Run], floor_runs: list[Run], *, delay: float, broken: bool, errors: list[str]
) -> None:
    """The speed promise: behavegate's median wall time over the bare client's, runs alternated."""
    bad = [r for r in floor_runs if r.rc != 0 or r.served != N_SCENARIOS or r.duration_ms is None]
    if bad:
        errors.append(f"ERROR: {label} failed: exit {bad[0].rc}, served {bad[0].served}, {bad[0].short_error()}")
        print(f"floor: {label} failed, no ratio")
        return
    n = len(bg_runs)
    bg_wall = statistics.median(r.wall for r in bg_runs)
    fl_wall = statistics.median(r.wall for r in floor_runs)
    fl_in = statistics.median(r.duration_ms or 0.0 for r in floor_runs) / 1000
    ratio = bg_wall / fl_wall
    print(f"floor: {label}, median of {n} runs alternated with behavegate's: wall {fl_wall:.3f} s, in-run {fl_in:.3f} s")
    durations = [r.duration_ms for r in bg_runs if r.duration_ms is not None]
    if durations and fl_in:
        bg_in = statistics.median(durations) / 1000
        print(f"  ratio behavegate/bare asyncio, in-run (harness.duration_ms / the client's own loop time): {bg_in / fl_in:.3f}")
    verdict = "INVALID" if broken else ("OK" if ratio <= FLOOR_RATIO else "MISSED")
    print(
        f"ratio behavegate/bare asyncio (wall, whole processes): {ratio:.3f}  {verdict} (target <= {FLOOR_RATIO};"
        f" {N_SCENARIOS} x {delay * 1000:.0f} ms at --concurrency {CONCURRENCY})"
    )


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    global N_SCENARIOS, CONCURRENCY  # --scenarios and --concurrency set them for every helper
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--behavegate", default=str(DEFAULT_BEHAVEGATE), help="behavegate executable (default %(default)s)")
    parser.add_argument("--skylos", default=str(DEFAULT_SKYLOS), help="skylos 5.1.2 executable (default %(default)s)")
    parser.add_argument("--delay", type=float, default=0.1, help="seconds the agent waits before each answer (default 0.1)")
    parser.add_argument(
        "--scenarios",
        type=int,
        default=N_SCENARIOS,
        help=f"scenarios in the contract, one assertion and one request each (default {N_SCENARIOS}; over {V1_MAX_ASSERTIONS} makes it version 2)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=CONCURRENCY, help=f"behavegate --concurrency and the floors' (default {CONCURRENCY})"
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="version-2 contract with agent.stream: true; the agent answers text/event-stream, the floor reads it",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed behavegate runs; the median is reported (default 3)")
    parser.add_argument(
        "--fail-every",
        type=int,
        default=25,
        help="every N-th scenario asks for a word the agent never says, so verdicts include failures (default 25; 0 = all pass)",
    )
    parser.add_argument(
        "--no-floors", action="store_true", help="skip the reference clients (bare stdlib asyncio client, bare httpx client)"
    )
    parser.add_argument("--no-skylos", action="store_true", help="do not run skylos (no verdict comparison)")
    parser.add_argument(
        "--concurrency-sweep", action="store_true", help=f"also time behavegate at --concurrency {', '.join(map(str, SWEEP))}"
    )
    parser.add_argument("--sweep-repeat", type=int, default=1, help="runs per sweep point; the median is reported (default 1)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile one behavegate.cli.main([...]) call (in a child process, after a warm-up call) against the same agent",
    )
    parser.add_argument(
        "--phases",
        action="store_true",
        help="also time behavegate's phases (start-up, contract, request loop, report) in child processes, alternated with the bare client",
    )
    parser.add_argument("--profile-top", type=int, default=25, help="rows per profile table (default 25)")
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="run the CLIs with the inherited environment (see bench/README.md)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.sweep_repeat < 1:
        parser.error("--repeat and --sweep-repeat must be >= 1")
    if not 0 <= args.delay <= 30:
        parser.error("--delay must be 0..30 seconds")
    if not 1 <= args.scenarios <= 100_000:
        parser.error("--scenarios must be 1..100000")
    if not 1 <= args.concurrency <= 64:
        parser.error("--concurrency must be 1..64 (behavegate's range)")
    N_SCENARIOS, CONCURRENCY = args.scenarios, args.concurrency
    # a version-1 contract (and skylos) stops at 250 assertions and never streams
    version = 2 if args.stream or N_SCENARIOS > V1_MAX_ASSERTIONS else 1

    behavegate = args.behavegate
    if not Path(behavegate).exists():
        found = shutil.which("behavegate")
        if not found:
            print(f"behavegate executable not found at {behavegate}", file=sys.stderr)
            return 2
        behavegate = found
    skylos: str | None = None
    if not args.no_skylos and version == 2:
        print(
            f"note: a version-2 contract (--stream or over {V1_MAX_ASSERTIONS} assertions); skylos reads version 1 only, not run"
        )
    elif not args.no_skylos:
        if Path(args.skylos).exists():
            skylos = args.skylos
        else:
            print(f"note: skylos not found at {args.skylos}; timing behavegate only")

    tmp = Path(tempfile.mkdtemp(prefix="behavegate-bench-live-"))
    global CHILD_ENV
    if args.no_bytecode_cache:
        CHILD_ENV = None
        pyc_mode = "inherited environment"
    else:
        CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        pyc_mode = f"private bytecode cache for both tools ({tmp / 'pycache'}), filled by one warm-up run each"

    agent = LoopbackAgent(args.delay)
    mismatches: list[str] = []
    errors: list[str] = []
    try:
        url = agent.start()
        contract, planned_fail = build_contract(N_SCENARIOS, args.fail_every, version=version, stream=args.stream)
        (tmp / "contract.yml").write_text(contract, encoding="utf-8")
        ideal = math.ceil(N_SCENARIOS / CONCURRENCY) * args.delay

        print(f"behavegate: {behavegate}")
        print(f"skylos:     {skylos or '(not run)'}")
        print(f"python:     {sys.version.split()[0]} on {sys.platform}, cpus={os.cpu_count()}, workdir={tmp}")
        print(f"bytecode:   {pyc_mode}")
        if hasattr(os, "getloadavg"):
            print(f"load avg:   {' '.join(f'{x:.2f}' for x in os.getloadavg())} (before)")
        answers = f"text/event-stream in {STREAM_PIECES} content deltas when asked" if args.stream else "JSON"
        print(f"agent:      {url} (in-process asyncio, keep-alive), delay {args.delay:.3f} s per request, {answers}")
        print(
            f"contract:   version {version}{', agent.stream: true' if args.stream else ''}, {N_SCENARIOS} scenarios x 1 assertion,"
            f" {planned_fail} planned failures, no endpoint in the contract"
        )
        print(f"ideal:      ceil({N_SCENARIOS}/{CONCURRENCY}) x {args.delay:.3f} s = {ideal:.3f} s")
        print()

        def cmd_bg(concurrency: int, scenario: str | None = None) -> list[str]:
            sel = ["--scenario", scenario] if scenario else []
            return [
                behavegate, "test", "contract.yml", "--endpoint", url, "--concurrency", str(concurrency),
                "--max-scenarios", str(N_SCENARIOS), *sel, "--no-artifacts", "--format", "json", "--output", "out.json",
            ]  # fmt: skip

        def cmd_sk(scenario: str | None = None) -> list[str]:
            assert skylos is not None
            sel = ["--scenario", scenario] if scenario else []
            return [
                skylos, "agent", "test", "contract.yml", "--endpoint", url, "--max-scenarios", str(N_SCENARIOS), *sel,
                "--no-artifacts", "--format", "json", "--output", "out.json",
            ]  # fmt: skip

        # warm-up: one single-scenario live run each (imports the live path, fills the .pyc cache)
        warm = run_cli(cmd_bg(CONCURRENCY, "s0000"), tmp, agent)
        print(f"warm-up behavegate (1 scenario): {warm.wall:.3f} s, exit {warm.rc}, {summary_of(warm)}")
        if skylos:
            warm_sk = run_cli(cmd_sk("s0000"), tmp, agent)
            print(f"warm-up skylos     (1 scenario): {warm_sk.wall:.3f} s, exit {warm_sk.rc}, {summary_of(warm_sk)}")
        print()

        # behavegate, K timed runs, each followed by one run of the bare asyncio client
        # (so both sample the same minutes of a shared machine)
        floor_label = "bare stdlib asyncio client" + (" (streaming)" if args.stream else "")
        floor_code = FLOOR_STDLIB_STREAM if args.stream else FLOOR_STDLIB
        bg_runs: list[Run] = []
        floor_runs: list[Run] = []
        for k in range(args.repeat):
            r = run_cli(cmd_bg(CONCURRENCY), tmp, agent)
            bg_runs.append(r)
            print(
                f"behavegate run {k + 1}/{args.repeat}: wall {r.wall:.3f} s, duration_ms {fmt_ms(r.duration_ms)}, cpu {fmt_s(r.cpu)},"
                f" exit {r.rc}, served {r.served}, peak in flight {r.peak}, connections {r.conns}"
            )
            if not args.no_floors:
                f = run_floor(sys.executable, floor_code, url, CONCURRENCY, tmp, agent)
                floor_runs.append(f)
                print(
                    f"  {floor_label} run {k + 1}/{args.repeat}: wall {f.wall:.3f} s, in-run {fmt_ms(f.duration_ms)},"
                    f" cpu {fmt_s(f.cpu)}, exit {f.rc}, served {f.served}, peak in flight {f.peak}"
                )
            if r.rc != bg_runs[0].rc or verdicts(r) != verdicts(bg_runs[0]):
                mismatches.append(
                    f"MISMATCH: behavegate verdicts changed between runs (run 1 exit {bg_runs[0].rc}, run {k + 1} exit {r.rc})"
                )
        print(f"  {summary_of(bg_runs[0])}")
        bg_wall = statistics.median(r.wall for r in bg_runs)
        durations = [r.duration_ms for r in bg_runs if r.duration_ms is not None]
        bg_dur = statistics.median(durations) if durations else None
        print()
        print(f"behavegate --concurrency {CONCURRENCY}, median of {args.repeat}:")
        print(f"  wall time          {bg_wall:.3f} s" + (f"   ratio wall/ideal        {bg_wall / ideal:.2f}x" if ideal else ""))
        if bg_dur is not None:
            print(
                f"  harness.duration   {bg_dur / 1000:.3f} s"
                + (f"   ratio duration_ms/ideal {bg_dur / 1000 / ideal:.2f}x" if ideal else "")
            )
            print(f"  outside the run    {bg_wall - bg_dur / 1000:.3f} s   (wall - duration_ms: start-up, parse, report, exit)")
        else:
            print("  harness.duration_ms: not in the report")
        cpus = [r.cpu for r in bg_runs if r.cpu is not None]
        if cpus:
            bg_cpu = statistics.median(cpus)
            print(
                f"  process CPU        {bg_cpu:.3f} s   ({bg_cpu / bg_wall:.0%} of wall; {bg_cpu / N_SCENARIOS * 1000:.2f} ms per scenario incl. start-up)"
            )
        broken = [r for r in bg_runs if not complete(r)]
        if broken:
            verdict = f"INVALID ({len(broken)} of {len(bg_runs)} runs did not judge all {N_SCENARIOS} scenarios live)"
            limit = f": exit {broken[0].rc}, served {broken[0].served}, {broken[0].short_error()}"
            errors.append(f"ERROR: behavegate run invalid{limit}")
        elif ideal:
            verdict = "OK" if bg_wall <= TARGET_RATIO * ideal else "MISSED"
            limit = f" (wall {bg_wall:.3f} s vs limit {TARGET_RATIO * ideal:.3f} s)"
        else:
            verdict, limit = "n/a (--delay 0)", ""
        print(f"target: {N_SCENARIOS} scenarios at --concurrency {CONCURRENCY} within {TARGET_RATIO}x ideal: {verdict}{limit}")
        if floor_runs:
            print_floor_ratio(floor_label, bg_runs, floor_runs, delay=args.delay, broken=bool(broken), errors=errors)

        if not args.no_floors:
            print()
            print(f"context, same agent, {N_SCENARIOS} requests at concurrency {CONCURRENCY}, median of {args.repeat}:")
            rows: list[tuple[str, list[Run]]] = [(floor_label, floor_runs)]  # measured between the timed runs
            floors = []
            venv_python = interpreter_of(behavegate)
            if venv_python and not args.stream:  # the httpx floor asks for JSON answers only
                floors.append(("bare httpx.AsyncClient + Semaphore", venv_python, FLOOR_HTTPX))
            for label, python, code in floors:
                rows.append((label, [run_floor(python, code, url, CONCURRENCY, tmp, agent) for _ in range(args.repeat)]))
            # the client's own cost: the same behavegate run against an agent that answers at once
            saved_delay = agent.delay
            agent.delay = 0.0
            try:
                rows.append(("behavegate, agent delay 0", [run_cli(cmd_bg(CONCURRENCY), tmp, agent) for _ in range(args.repeat)]))
            finally:
                agent.delay = saved_delay
            print(f"  {'client':<36}{'wall s':>9}{'in-run s':>10}{'cpu s':>8}{'in-run/ideal':>14}")
            for label, runs in rows:
                bad = [r for r in runs if r.served != N_SCENARIOS or (r.rc != 0 and r.duration_ms is None)]
                if bad:
                    print(f"  {label:<36} failed: exit {bad[0].rc}, served {bad[0].served}, {bad[0].short_error()}")
                    continue
                w = statistics.median(r.wall for r in runs)
                d = statistics.median(r.duration_ms or 0.0 for r in runs) / 1000
                cs = [r.cpu for r in runs if r.cpu is not None]
                c = statistics.median(cs) if len(cs) == len(runs) else None
                zero = label.endswith("delay 0")
                rel = "-" if zero or not ideal else f"{d / ideal:.2f}x"
                print(f"  {label:<36}{w:>9.3f}{d:>10.3f}{fmt_s(c):>8}{rel:>14}")
                if zero:
                    print(
                        f"    -> {d / N_SCENARIOS * 1000:.2f} ms of client time per request when the agent answers at once"
                        " (the part of each wave's latency that no concurrency setting can hide)"
                    )

        # skylos, once
        if skylos:
            print()
            sk = run_cli(cmd_sk(), tmp, agent)
            print(
                f"skylos (sequential), 1 run: wall {sk.wall:.3f} s, duration_ms {fmt_ms(sk.duration_ms)}, exit {sk.rc},"
                f" served {sk.served}, peak in flight {sk.peak}, connections {sk.conns}"
            )
            print(f"  {summary_of(sk)}")
            print(f"ratio behavegate/skylos (wall): {bg_wall / sk.wall:.3f}  (skylos/behavegate {sk.wall / bg_wall:.1f}x)")
            if bg_dur is not None and sk.duration_ms:
                print(f"ratio behavegate/skylos (duration_ms): {bg_dur / sk.duration_ms:.3f}")
            problems = compare(bg_runs[0], sk)
            mismatches.extend(problems)
            for line in problems:
                print(line)
            if not problems:
                print(
                    f"verdicts: identical (exit code, run status and {len(verdicts(sk).get('scenarios', []))} per-scenario statuses)"
                )

        # concurrency sweep
        if args.concurrency_sweep:
            print()
            print(f"concurrency sweep (behavegate, median of {args.sweep_repeat}):")
            sweep_httpx = None if args.no_floors or args.stream else interpreter_of(behavegate)
            extra = f"{'bare httpx wall s':>19}{'/ideal':>8}" if sweep_httpx else ""
            print(f"  {'concurrency':>11}{'ideal s':>10}{'wall s':>10}{'wall/ideal':>12}{'duration s':>12}{'peak':>6}{extra}")
            for c in SWEEP:
                runs = [run_cli(cmd_bg(c), tmp, agent) for _ in range(args.sweep_repeat)]
                for r in runs:
                    if r.rc != bg_runs[0].rc or verdicts(r) != verdicts(bg_runs[0]):
                        mismatches.append(
                            f"MISMATCH: behavegate verdicts at --concurrency {c} differ from --concurrency {CONCURRENCY}"
                            f" (exit {r.rc} vs {bg_runs[0].rc}; {summary_of(r)})"
                        )
                w = statistics.median(r.wall for r in runs)
                ds = [r.duration_ms for r in runs if r.duration_ms is not None]
                dur_s = statistics.median(ds) / 1000 if ds else None
                ideal_c = math.ceil(N_SCENARIOS / c) * args.delay
                ratio = f"{w / ideal_c:.2f}x" if ideal_c else "-"
                extra = ""
                if sweep_httpx:
                    hw = statistics.median(
                        run_floor(sweep_httpx, FLOOR_HTTPX, url, c, tmp, agent).wall for _ in range(args.sweep_repeat)
                    )
                    extra = f"{hw:>19.3f}{f'{hw / ideal_c:.2f}x' if ideal_c else '-':>8}"
                print(
                    f"  {c:>11}{ideal_c:>10.3f}{w:>10.3f}{ratio:>12}{'-' if dur_s is None else f'{dur_s:.3f}':>12}{max(r.peak for r in runs):>6}{extra}"
                )

        if args.phases:
            phases_python = interpreter_of(behavegate)
            if phases_python:
                phases_runs(phases_python, cmd_bg(CONCURRENCY)[1:], floor_code, url, tmp, agent, args.repeat)
            else:
                print(f"phases skipped: no python next to {behavegate}")

        if args.profile:
            prof_python = interpreter_of(behavegate)
            if prof_python:
                profile_child(prof_python, tmp, url, agent, args.profile_top)
            else:
                print(f"profile skipped: no python next to {behavegate}")
    finally:
        agent.stop()
        if args.keep:
            print(f"\nkept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    if mismatches or errors:
        print()
    for line in errors:
        print(line)
    for line in mismatches:
        print(line)
    if mismatches:
        print(f"MISMATCH: {len(mismatches)} verdict difference(s)")
    if errors:
        return 2
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
