"""Hostile MCP clients against the scripted tool server (agent.mcp): wrong paths, floods, huge
bodies and slow headers (slowloris) are bounded and refused while a run goes on, and its verdicts
are those of the same run left alone. A refused request on an attempt's own path leaves that
attempt's tool evidence incomplete, never "no call". Real loopback, no network."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fake_agent import Answer, Request, serve
from helpers import contract
from mcp_agents import Calls, run_tools

from behavegate.cli import main
from behavegate.evidence.mcp_server import ToolServer, tool_side
from behavegate.model import Observation

CONTRACT = """version: 2
agent:
  model: m
  mcp: {serve: true}
  tools:
    - {name: lookup_order, description: Look an order up., parameters: {type: object}}
    - {name: issue_refund, description: Refund an order., parameters: {type: object}}
scenarios:
  - id: refund
    prompt: Refund A-1.
    tool_results: {lookup_order: {status: shipped}, issue_refund: {ok: true}}
    expect: {tools: {required: [lookup_order], forbidden: [issue_refund]}}
  - id: lookup
    prompt: Where is A-1?
    tool_results: {lookup_order: {status: shipped}}
    expect: {tools: {required: [lookup_order], no_errors: true}, response: {contains: [shipped]}}
"""
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "issue_refund", "arguments": {}}}
SLOW = 0.3  # MCP_HEADER_SECONDS in these tests
FLOOD = 100  # guessed paths each attempt's agent sends


def attack(url: str, held: list[socket.socket]) -> list[int]:
    """What a hostile client on the machine does to the server at ``url``'s host and port
    (it does not know any attempt's path): the status codes it got."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    for _ in range(8):  # slowloris: a request's first bytes, then nothing
        raw = socket.create_connection((parts.hostname or "", parts.port or 0))
        raw.sendall(b"POST /mcp/x HTTP/1.1\r\nHost: a\r\n")
        held.append(raw)
    codes = []
    with httpx.Client() as http:
        for n in range(FLOOD):  # a flood of guessed paths on one connection
            codes.append(http.post(f"{origin}/mcp/guess-{n}", json=CALL).status_code)
        for path in ("/", "/mcp", "/mcp/", url.rsplit("/", 1)[0] + "/", url + "x"):
            codes.append(http.post(path if path.startswith("http") else origin + path, json=CALL).status_code)
        huge = json.dumps({**CALL, "padding": "x" * (4 * 1024 * 1024)})
        codes.append(http.post(f"{origin}/mcp/guess", content=huge, headers={"content-type": "application/json"}).status_code)
    return codes


AGENT_CALLS: dict[str, Calls] = {
    "Refund A-1.": [("lookup_order", {}), ("issue_refund", {})],
    "Where is A-1?": [("lookup_order", {})],
}


def agent(hostile: bool, held: list[socket.socket], seen: list[int]) -> Answer:
    def answer(request: Request) -> dict[str, Any]:
        url = request.header("X-Behavegate-MCP-URL")
        if hostile:
            seen.extend(attack(url, held))
        texts = run_tools(url, AGENT_CALLS[request.prompt])
        message = {"role": "assistant", "content": " ".join(texts)}
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    return answer


def verdicts(tmp_path: Path, answer: Answer) -> tuple[int, dict[str, Any]]:
    (tmp_path / "contract.yml").write_text(CONTRACT)
    with serve(answer) as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--concurrency", "1", "--no-artifacts", "--report", "r.json"])
    report = json.loads((tmp_path / "r.json").read_text())
    return code, {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in report["scenarios"]}


def test_hostile_clients_are_refused_and_bounded_and_the_run_keeps_the_verdicts_it_has_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("behavegate.evidence.mcp_server.MCP_HEADER_SECONDS", SLOW)
    alone = verdicts(tmp_path, agent(False, [], []))
    held: list[socket.socket] = []
    seen: list[int] = []
    attacked = verdicts(tmp_path, agent(True, held, seen))
    capsys.readouterr()
    assert attacked == alone == (1, alone[1])
    assert alone[1]["refund"]["tools.forbidden[0]"] == "fail" and alone[1]["lookup"]["tools.required[0]"] == "pass"
    assert set(seen) == {404}, sorted(set(seen))  # wrong paths and the huge body: refused before they are read
    assert len(seen) == 2 * (FLOOD + 6)
    try:
        for raw in held:  # each slow request was cut by the server (it ended with the run at the latest)
            raw.settimeout(10)
            assert raw.recv(1) == b""
    finally:
        for raw in held:
            raw.close()


def test_slow_headers_are_cut_while_the_server_still_answers_others(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("behavegate.evidence.mcp_server.MCP_HEADER_SECONDS", SLOW)
    parsed = contract(CONTRACT)

    async def served() -> tuple[float, list[str]]:
        server = ToolServer(parsed.agent, "127.0.0.1")
        async with server.running(), server.attempt(parsed.scenarios[1]) as tools:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"POST /mcp/x HTTP/1.1\r\nHost: a\r\n")
            await writer.drain()
            began = asyncio.get_running_loop().time()
            texts = await asyncio.to_thread(run_tools, tools.url, [("lookup_order", {})])
            assert await asyncio.wait_for(reader.read(), 10) == b""  # closed by the server, the run still on
            writer.close()
            return asyncio.get_running_loop().time() - began, texts

    waited, texts = asyncio.run(served())
    assert "shipped" in texts[0]
    assert SLOW * 0.5 <= waited < 5


@pytest.mark.parametrize("hostile", ["huge", "flood"])
def test_a_refused_request_on_the_attempts_own_path_leaves_its_calls_not_known_never_no_call(
    hostile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("behavegate.evidence.mcp_server.MCP_MAX_REQUESTS", 2)
    parsed = contract(CONTRACT)

    async def served() -> tuple[list[int], Observation]:
        server = ToolServer(parsed.agent, "127.0.0.1")
        async with server.running(), server.attempt(parsed.scenarios[0]) as tools, httpx.AsyncClient() as http:
            if hostile == "huge":  # an issue_refund too large to read: it may have been a forbidden call
                huge = json.dumps({**CALL, "padding": "x" * (2 * 1024 * 1024)})
                codes = [(await http.post(tools.url, content=huge, headers={"content-type": "application/json"})).status_code]
            else:
                codes = [
                    (await http.post(tools.url, json={"jsonrpc": "2.0", "id": n, "method": "ping"})).status_code for n in range(3)
                ]
            tools.close()
            return codes, tool_side(Observation("refund", response="done"), tools)

    codes, observation = asyncio.run(served())
    assert codes[-1] == (413 if hostile == "huge" else 429)
    assert observation.tool_calls == () and observation.tool_calls_complete is False
    assert observation.tool_gap is not None and "not all observed" in observation.tool_gap
