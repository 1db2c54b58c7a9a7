"""A hostile review of what landed on 2026-12-03 (MCP tool server and target, conversations,
templates and state, golden sets): each test pins a finding, as an attacker or a careless user
would meet it. Real loopback servers, no egress."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from fake_agent import RawServer, Request, serve
from helpers import contract
from mcp.server.mcpserver import MCPServer
from mcp_agents import FIXED, REFUND, free_port, mcp_served, runs_over_mcp

from behavegate.cli import main
from behavegate.evidence.mcp_server import ToolServer


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _statuses(report: dict[str, Any], index: int = 0) -> dict[str, str]:
    return {a["assertion"]: a["status"] for a in report["scenarios"][index]["assertions"]}


# --- the MCP tool server: a call admitted for one attempt is never another's ------------------


def test_a_call_whose_headers_reached_the_fixed_url_in_one_attempt_is_never_recorded_on_the_next() -> None:
    """Fixed URL: the request was admitted while attempt 1 held /mcp; its body (the tools/call)
    arrives once attempt 1 has ended and attempt 2 holds the path. Before the fix the call was
    looked up by path again when it ran, so it became attempt 2's evidence (a call attempt 2
    never made; attempt 1 never charged with it)."""
    parsed = contract(FIXED)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup_order", "arguments": {"order_id": "A-1"}}}
    ).encode()
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()

    async def served() -> tuple[list[Any], list[Any], bytes]:
        server = ToolServer(parsed.agent, "127.0.0.1", free_port())
        async with server.running():
            async with server.attempt(parsed.scenarios[0]) as first:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(head)
                await writer.drain()
                await asyncio.sleep(0.3)  # the app has admitted the request and waits for its body
            async with server.attempt(parsed.scenarios[1]) as second:
                writer.write(body)
                await writer.drain()
                answer = await asyncio.wait_for(reader.read(65536), 10)
                writer.close()
        return first.calls, second.calls, answer

    first, second, answer = asyncio.run(served())
    assert second == [], "attempt 2 was charged with a call made on attempt 1's request"
    assert first == []  # it came after attempt 1's answer: refused, as any late call on its own path
    assert b'"isError":false' not in answer.replace(b" ", b"")  # the late call was not answered as a success


# --- the MCP target: a result's other content is never silently dropped -------------------------

TARGET = """version: 2
agent:
  api: mcp
  timeout_seconds: 10
scenarios:
  - id: no-secret
    call: {tool: export_order, arguments: {order_id: A-1}}
    expect:
      response: {excludes: [SECRET-KEY]}
"""


def leaky() -> MCPServer:
    server = MCPServer("orders")

    @server.tool(description="Export an order.")
    def export_order(order_id: str) -> list[types.TextContent | types.EmbeddedResource]:
        leaked = types.TextResourceContents(uri="file:///keys.txt", text="SECRET-KEY=hunter2", mime_type="text/plain")
        return [types.TextContent(text=f"{order_id} exported"), types.EmbeddedResource(resource=leaked)]

    return server


def test_an_mcp_target_result_with_an_embedded_resource_never_passes_excludes_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The result carries the forbidden text in an embedded text resource; the response read
    only the text parts, so response.excludes passed on a result that leaked the secret."""
    (tmp_path / "contract.yml").write_text(TARGET)
    with mcp_served(leaky()) as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--report", "r.json", "--no-artifacts"])
    capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text())
    verdict = report["scenarios"][0]["assertions"][0]
    assert (verdict["assertion"], verdict["status"]) == ("response.excludes[0]", "incomplete"), verdict
    assert "not text (resource)" in verdict["message"]
    assert code == 2


# --- the MCP tool server: an attempt's recorded calls are bounded in bytes, as its HTTP turns are ---

PER_ATTEMPT = FIXED.replace("mcp: {serve: true, url: fixed}", "mcp: {serve: true}")


def test_an_agent_cannot_make_one_attempt_record_more_than_its_byte_budget_of_mcp_calls() -> None:
    """Each body under the 1 MiB bound, 12 of them: about 12 MB of arguments held as one
    attempt's evidence (250 calls would be 250 MB, times the attempts in flight), where the
    attempt's HTTP side stops at 8 MiB. Past the budget the calls are refused and the attempt's
    tool evidence is incomplete, never judged on what was kept."""
    from behavegate.evidence.mcp_server import tool_side
    from behavegate.limits import ATTEMPT_MAX_REQUEST_BYTES
    from behavegate.model import Observation

    parsed = contract(PER_ATTEMPT)
    padding = "x" * 1_000_000

    async def flood() -> tuple[int, Observation]:
        server = ToolServer(parsed.agent, "127.0.0.1")
        async with server.running(), server.attempt(parsed.scenarios[0]) as tools:
            async with httpx.AsyncClient(timeout=30) as http:
                for index in range(12):
                    params = {"name": "lookup_order", "arguments": {"order_id": padding}}
                    call = {"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params}
                    await http.post(tools.url, json=call, headers={"accept": "application/json, text/event-stream"})
            tools.close()
            kept = sum(len(json.dumps(served.call.arguments)) for served in tools.calls)
            return kept, tool_side(Observation("a-1", response="ok", response_complete=True, finish_reason="stop"), tools)

    kept, observed = asyncio.run(flood())
    assert kept <= ATTEMPT_MAX_REQUEST_BYTES
    assert observed.tool_calls_complete is False and observed.tool_gap is not None


def structured_only() -> MCPServer:
    server = MCPServer("orders")

    @server.tool(description="Export an order.")
    def export_order(order_id: str) -> types.CallToolResult:
        return types.CallToolResult(content=[], structured_content={"order": order_id, "key": "SECRET-KEY=hunter2"})

    return server


def test_an_mcp_target_result_of_structured_content_only_never_passes_excludes_on_no_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No text part, the secret in structuredContent: the response was the empty text, so
    response.excludes passed."""
    (tmp_path / "contract.yml").write_text(TARGET)
    with mcp_served(structured_only()) as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--report", "r.json", "--no-artifacts"])
    capsys.readouterr()
    verdict = json.loads((tmp_path / "r.json").read_text())["scenarios"][0]["assertions"][0]
    assert verdict["status"] == "incomplete", verdict
    assert "structured content" in verdict["message"]
    assert code == 2


# --- tools with behaviour: a state written into itself cannot outgrow what a replay reads ---------

NESTING = """version: 2
agent:
  model: m
  missing_tool_calls: none
  tools: [{name: add, description: Add an item to the cart., parameters: {type: object}}]
scenarios:
  - id: cart
    prompt: fill the cart
    max_turns: 3
    state: {cart: []}
    tool_results:
      - {name: add, content: "{{state.cart}}", set: {cart: ["{{state.cart}}", "{{arguments.item}}"]}}
    expect: {tools: {max_calls: 250}, response: {contains: [done]}}
"""


def _adds(request: Request) -> dict[str, Any]:
    """40 calls of add in one answer, then done."""
    body = request.json()
    if any(message["role"] == "tool" for message in body["messages"]):
        message: dict[str, Any] = {"role": "assistant", "content": "done"}
    else:
        call = {"type": "function", "function": {"name": "add", "arguments": '{"item": "x"}'}}
        message = {"role": "assistant", "content": None, "tool_calls": [{**call, "id": f"c{i}"} for i in range(40)]}
    reason = "tool_calls" if "tool_calls" in message else "stop"
    return {"choices": [{"index": 0, "message": message, "finish_reason": reason}]}


def test_a_state_nested_into_itself_by_the_agents_calls_is_judged_alike_live_and_from_its_saved_observations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each call wraps the cart in one more list: 40 calls, 40 levels. Live passed (exit 0)
    while its saved observations were refused ("Observation file nesting exceeds 32", exit 2)
    and `behavegate replay` called its own results invalid JSON ("nesting exceeds 64")."""
    (tmp_path / "contract.yml").write_text(NESTING)
    with serve(_adds) as url:
        args = ["test", "contract.yml", "--endpoint", url, "--allow-contract-endpoint", "--no-artifacts"]
        live = main([*args, "--report", "live.json", "--save-observations", "obs.json"])
    offline = main(["test", "contract.yml", "--observations", "obs.json", "--report", "offline.json"])
    err = capsys.readouterr().err
    assert "nesting exceeds" not in err
    statuses = [json.loads((tmp_path / name).read_text())["scenarios"][0]["status"] for name in ("live.json", "offline.json")]
    assert statuses == ["incomplete", "incomplete"]
    assert (live, offline) == (2, 2)
    assert "nest" in json.loads((tmp_path / "live.json").read_text())["scenarios"][0]["observation"]["error"]


def test_an_mcp_call_whose_arguments_nest_past_what_a_replay_reads_leaves_the_attempts_tool_evidence_incomplete() -> None:
    """40 levels of arguments in one tools/call (a 1 MiB body allows thousands): recorded as
    they came, the attempt's saved observations could not be read back (32 levels at most)."""
    from behavegate.evidence.mcp_server import tool_side
    from behavegate.model import Observation

    parsed = contract(PER_ATTEMPT)
    deep: Any = "A-1"
    for _ in range(40):
        deep = [deep]

    async def sent() -> Observation:
        server = ToolServer(parsed.agent, "127.0.0.1")
        async with server.running(), server.attempt(parsed.scenarios[0]) as tools, httpx.AsyncClient(timeout=30) as http:
            params = {"name": "lookup_order", "arguments": {"order_id": deep}}
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            await http.post(tools.url, json=call, headers={"accept": "application/json, text/event-stream"})
            tools.close()
            return tool_side(Observation("a-1", response="ok", response_complete=True, finish_reason="stop"), tools)

    observed = asyncio.run(sent())
    assert observed.tool_calls_complete is False and "nest" in (observed.tool_gap or "")
    assert observed.tool_calls == ()


def _deep_arguments(request: Request) -> dict[str, Any]:
    """One call whose arguments nest 40 levels (the response bound is 64), then done."""
    body = request.json()
    if any(message["role"] == "tool" for message in body["messages"]):
        message: dict[str, Any] = {"role": "assistant", "content": "done"}
    else:
        arguments = json.dumps({"item": json.loads("[" * 40 + "]" * 40)})
        call = {"id": "c0", "type": "function", "function": {"name": "add", "arguments": arguments}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    reason = "tool_calls" if "tool_calls" in message else "stop"
    return {"choices": [{"index": 0, "message": message, "finish_reason": reason}]}


@pytest.mark.xfail(
    strict=True,
    reason="not fixed: a chat answer's tool-call arguments may nest 64 levels (RESPONSE_MAX_DEPTH) but an observation "
    "file only 32 (INPUT_MAX_DEPTH), so --save-observations writes a file --observations refuses; which side moves "
    "(arguments as 'not observed' past a bound, or the reader's bound) touches version-1 meaning: the lead's call",
)
def test_an_agents_deeply_nested_arguments_are_judged_alike_live_and_from_its_saved_observations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(
        NESTING.replace('content: "{{state.cart}}", set: {cart: ["{{state.cart}}", "{{arguments.item}}"]}', "content: ok")
    )
    with serve(_deep_arguments) as url:
        args = ["test", "contract.yml", "--endpoint", url, "--allow-contract-endpoint", "--no-artifacts"]
        live = main([*args, "--report", "live.json", "--save-observations", "obs.json"])
    offline = main(["test", "contract.yml", "--observations", "obs.json", "--report", "offline.json"])
    capsys.readouterr()
    assert live == offline, (live, offline)


# --- placeholders: a path step that looks like a digit but is not one ---------------------------

SUPERSCRIPT = PER_ATTEMPT.replace(
    "tool_results: {lookup_order: {status: shipped}}",
    'tool_results: [{name: lookup_order, content: "first item: {{arguments.items.²}}"}]',
)


def test_a_placeholder_step_that_is_a_digit_but_not_decimal_leaves_the_call_unanswered_never_a_crash() -> None:
    """A superscript two: "²".isdigit() is true and int("²") raises; a list at that step raised ValueError out of the
    MCP server's call handler, so the call was never recorded (the SDK answered the agent an error)."""
    from behavegate.evidence.mcp_server import AttemptTools, tool_side
    from behavegate.model import Observation

    parsed = contract(SUPERSCRIPT)
    tools = AttemptTools(parsed.agent, parsed.scenarios[0], "http://127.0.0.1:9/mcp/x")
    result = tools.call("lookup_order", {"items": ["a", "b"]})
    tools.close()
    observed = tool_side(Observation("a-1", response="ok", response_complete=True, finish_reason="stop"), tools)
    assert result.is_error
    assert observed.error is not None and "{{arguments.items.²}}" in observed.error


def test_a_call_the_mcp_server_fails_to_answer_leaves_the_attempts_tool_evidence_incomplete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever raises while a call is answered, the SDK turns it into an error result for the
    agent (HTTP 200) and the call was never recorded: a forbidden call could pass as "no call"."""
    from behavegate.evidence import mcp_server
    from behavegate.model import Observation

    def broken(*_: object) -> None:
        raise RuntimeError("a bug behavegate has not found yet")

    monkeypatch.setattr(mcp_server, "answer", broken)
    parsed = contract(PER_ATTEMPT)

    async def sent() -> Observation:
        server = ToolServer(parsed.agent, "127.0.0.1")
        async with server.running(), server.attempt(parsed.scenarios[0]) as tools, httpx.AsyncClient(timeout=30) as http:
            params = {"name": "lookup_order", "arguments": {"order_id": "A-1"}}
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            await http.post(tools.url, json=call, headers={"accept": "application/json, text/event-stream"})
            tools.close()
            return mcp_server.tool_side(Observation("a-1", response="ok", response_complete=True, finish_reason="stop"), tools)

    observed = asyncio.run(sent())
    assert observed.error is not None or observed.tool_calls_complete is False, observed


class _Flood(RawServer):
    """An MCP target that answers the client's first request with 24 MiB, counting what it got to send."""

    sent = 0

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        size = 24 * 1024 * 1024
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
        connection.sendall(head.encode())
        chunk = b" " * 65536
        for _ in range(size // len(chunk)):
            connection.sendall(chunk)
            self.sent += len(chunk)
        return False


def test_an_mcp_target_cannot_make_behavegate_read_more_than_a_response_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from behavegate.limits import ATTEMPT_MAX_RESPONSE_BYTES

    server = _Flood()
    (tmp_path / "contract.yml").write_text(TARGET)
    try:
        url = server.url.replace("/v1/chat/completions", "/mcp")
        code = main(["test", "contract.yml", "--endpoint", url, "--report", "r.json", "--no-artifacts"])
    finally:
        server.close()
    capsys.readouterr()
    assert code == 2
    assert server.sent <= ATTEMPT_MAX_RESPONSE_BYTES + 8 * 1024 * 1024, f"{server.sent:,} bytes read"  # socket buffers
    assert "more than 8,388,608 bytes" in json.loads((tmp_path / "r.json").read_text())["scenarios"][0]["observation"]["error"]


# --- replay: an MCP attempt stopped by its call budget, or with a refused request, is judged alike offline ---


def _judged(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["assertion"], a["status"]) for s in report["scenarios"] for a in s["assertions"]]


@pytest.mark.parametrize("stopped", [True, False])
def test_mcp_tool_side_evidence_replays_to_the_live_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stopped: bool
) -> None:
    budget = REFUND.replace("no_errors: true", "no_errors: true\n        max_calls: 1")

    calling = runs_over_mcp([("lookup_order", {"order_id": "A-1"}), ("escalate_to_human", {})])
    text = budget if stopped else REFUND
    (tmp_path / "contract.yml").write_text(text)
    with serve(calling, "/run") as url:
        args = ["test", "contract.yml", "--endpoint", url, "--no-artifacts"]
        live = main([*args, "--report", "live.json", "--save-observations", "obs.json"])
    offline = main(["test", "contract.yml", "--observations", "obs.json", "--report", "offline.json"])
    capsys.readouterr()
    reports = [json.loads((tmp_path / name).read_text()) for name in ("live.json", "offline.json")]
    assert _judged(reports[0]) == _judged(reports[1])
    assert live == offline == (1 if stopped else 0)


# --- agent.mcp with a chat agent: calls it asks behavegate to answer over chat still count ---------

CHAT_MCP = """version: 2
agent:
  model: m
  mcp: {serve: true}
  tools:
    - {name: lookup_order, description: Look an order up., parameters: {type: object}}
    - {name: issue_refund, description: Refund an order., parameters: {type: object}}
scenarios:
  - id: refund
    prompt: Is order A-1 shipped?
    tool_results:
      - {default: {content: {ok: true}}}
    expect:
      tools: {forbidden: [issue_refund]}
"""


def _chat_caller(request: Request) -> dict[str, Any]:
    """Ignores the MCP URL: asks for issue_refund as a chat tool call, then answers."""
    body = request.json()
    if any(message["role"] == "tool" for message in body["messages"]):
        message: dict[str, Any] = {"role": "assistant", "content": "refunded"}
    else:
        call = {"id": "c0", "type": "function", "function": {"name": "issue_refund", "arguments": "{}"}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    # finish_reason "stop" beside tool_calls, as some providers send it
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def test_a_forbidden_call_a_chat_agent_makes_over_chat_beside_a_served_mcp_server_never_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tool side replaced the attempt's calls with its MCP calls (none here), so the call
    the answer listed vanished and tools.forbidden passed (exit 0)."""
    (tmp_path / "contract.yml").write_text(CHAT_MCP)
    with serve(_chat_caller) as url:
        args = ["test", "contract.yml", "--endpoint", url, "--allow-contract-endpoint", "--no-artifacts"]
        code = main([*args, "--report", "r.json"])
    capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text())
    verdict = report["scenarios"][0]["assertions"][0]
    assert (verdict["assertion"], verdict["status"]) == ("tools.forbidden[0]", "incomplete"), verdict
    assert "did not reach the attempt's MCP path: issue_refund" in verdict["message"]
    assert code == 2
