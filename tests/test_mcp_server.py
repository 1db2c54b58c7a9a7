"""The scripted MCP tool server of a live run (``agent.mcp.serve``): an agent written here runs
its tools through the MCP URL it was given (with the ``mcp`` SDK's own client), answers only
text, and is judged on the calls its attempt's path received. Real loopback, no network."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_agent import Answer, Request, serve
from helpers import contract
from mcp import Client
from mcp_agents import HTTP_AGENT, REFUND, TOOLS, run_tools, runs_over_mcp

from behavegate.cli import main
from behavegate.errors import ContractError
from behavegate.evidence import responses
from behavegate.evidence.mcp_server import ToolServer, tool_side
from behavegate.model import Observation


def verdicts(tmp_path: Path, text: str, answer: Answer, *extra: str) -> tuple[int, dict[str, Any]]:
    """The CLI's exit code and JSON report for ``text`` against the agent ``answer`` configures."""
    (tmp_path / "contract.yml").write_text(text)
    with serve(answer, "/run") as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--no-artifacts", "--report", "r.json", *extra])
    return code, json.loads((tmp_path / "r.json").read_text())


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the CLI reads and writes inside the project: here


def statuses(report: dict[str, Any], index: int = 0) -> dict[str, str]:
    return {a["assertion"]: a["status"] for a in report["scenarios"][index]["assertions"]}


def test_a_forbidden_tool_the_agent_runs_over_mcp_fails_though_its_answer_shows_no_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refunds = runs_over_mcp([("lookup_order", {"order_id": "A-1"}), ("issue_refund", {"order_id": "A-1"})])
    code, report = verdicts(tmp_path, REFUND, refunds)
    capsys.readouterr()
    assert report["provenance"]["mcp_tool_server"]["listen"] == "127.0.0.1"
    assert statuses(report) == {
        "response.contains[0]": "pass",
        "response.uses_tool_result[0]": "pass",  # the scripted {status: shipped} reached the answer
        "tools.required[0]": "pass",
        "tools.forbidden[0]": "fail",
        "tools.arguments_valid": "pass",
        "tools.no_errors": "pass",
    }
    assert code == 1


def test_a_scripted_error_result_served_over_mcp_fails_no_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    escalates = runs_over_mcp([("lookup_order", {"order_id": "A-1"}), ("escalate_to_human", {"reason": "refund"})])
    failing = REFUND.replace("{default: {content: {ok: true}}}", "{name: escalate_to_human, error: queue is full}")
    code, report = verdicts(tmp_path, failing, escalates)
    capsys.readouterr()
    found = statuses(report)
    assert found["tools.no_errors"] == "fail" and found["tools.forbidden[0]"] == "pass"
    assert code == 1


A1 = "{name: lookup_order, arguments: {order_id: A-1}}"
B2 = "{name: lookup_order, arguments: {order_id: B-2}}"
CHAT = f"""version: 2
agent:
  model: m
  mcp: {{serve: true}}
{TOOLS}scenarios:
  - id: first
    prompt: A-1
    tool_results: {{lookup_order: {{status: shipped}}}}
    expect: {{tools: {{sequence: {{mode: exact, calls: [{A1}, {A1}]}}}}}}
  - id: second
    prompt: B-2
    tool_results: {{lookup_order: {{status: lost}}}}
    expect: {{tools: {{sequence: {{mode: exact, calls: [{B2}, {B2}]}}}}}}
"""


def test_two_attempts_in_flight_at_once_each_keep_only_their_own_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = threading.Barrier(2, timeout=10)  # each attempt calls only once both are in flight

    def chat(request: Request) -> dict[str, Any]:
        order = request.prompt
        both.wait()
        run_tools(request.header("X-Behavegate-MCP-URL"), [("lookup_order", {"order_id": order})] * 2)
        message = {"role": "assistant", "content": f"{order} looked up"}  # no tool_calls key: the agent ran them
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    code, report = verdicts(tmp_path, CHAT, chat, "--concurrency", "2")
    capsys.readouterr()
    assert [s["status"] for s in report["scenarios"]] == ["pass", "pass"], report["scenarios"]
    assert code == 0


async def _served(calls_after: bool) -> tuple[list[int], Observation, Observation | None]:
    """A server with one attempt: requests on wrong paths, and (``calls_after``) a call on the
    attempt's path once its answer is in."""
    parsed = contract(REFUND)
    server = ToolServer(parsed.agent, "127.0.0.1")
    codes = []
    async with server.running():
        async with server.attempt(parsed.scenarios[0]) as tools:
            stale = tools.url
            async with httpx.AsyncClient() as http:
                for url in (server.base_url() + "guessed", server.base_url().rstrip("/"), stale + "x"):
                    codes.append((await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).status_code)
            async with Client(tools.url) as client:
                await client.call_tool("lookup_order", {"order_id": "A-1"})
            tools.close()  # the answer arrived
            answered = tool_side(Observation("refund", response="shipped"), tools)
        late = None
        if calls_after:
            async with httpx.AsyncClient() as http:
                codes.append((await http.post(stale, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).status_code)
            late = tool_side(Observation("refund", response="shipped"), tools)
    return codes, answered, late


def test_requests_on_unknown_paths_are_refused_and_never_evidence() -> None:
    codes, answered, _ = asyncio.run(_served(calls_after=False))
    assert codes == [404, 404, 404]
    assert [(c.name, c.arguments, c.executed) for c in answered.tool_calls or ()] == [("lookup_order", {"order_id": "A-1"}, True)]


def test_a_call_after_the_attempt_ended_is_refused_and_not_its_evidence() -> None:
    codes, answered, late = asyncio.run(_served(calls_after=True))
    assert codes[-1] == 404
    assert late == answered and len(answered.tool_calls or ()) == 1


def test_an_attempt_whose_mcp_server_could_not_start_is_incomplete_never_no_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = verdicts(tmp_path, REFUND, runs_over_mcp([]), "--mcp-listen", "192.0.2.1")  # TEST-NET-1: not this machine's
    capsys.readouterr()
    assert set(statuses(report).values()) == {"incomplete"}
    assert "MCP tool server could not be started on 192.0.2.1" in json.dumps(report)
    assert code == 2


@pytest.mark.parametrize(
    ("old", "new", "path", "line", "message"),
    [
        ("  mcp: {serve: true}\n", "", "agent.http.request", 4, "places {{mcp_url}}, but agent.mcp.serve is not true"),
        ("{serve: true}", "{serve: true, listen: 0.0.0.0}", "agent.mcp.listen", 3, "Unknown behavior contract key"),
        ("{serve: true}", "{}", "agent.mcp.serve", 3, "agent.mcp.serve is required"),
        ("{serve: true}", "{serve: maybe}", "agent.mcp.serve", 3, "agent.mcp.serve"),
    ],
)
def test_contract_problems_of_agent_mcp_are_named_with_path_and_line(
    old: str, new: str, path: str, line: int, message: str
) -> None:
    with pytest.raises(ContractError) as error:
        contract(REFUND.replace(old, new))
    assert any(p.path == path and message in p.text and p.line == line for p in error.value.problems), error.value.problems


def test_a_wildcard_listen_address_is_refused_before_anything_is_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "contract.yml").write_text(REFUND)
    code = main(["test", "contract.yml", "--endpoint", "http://127.0.0.1:9/run", "--mcp-listen", "0.0.0.0"])
    assert code == 2
    assert "not a wildcard" in capsys.readouterr().err


def test_the_responses_api_is_offered_the_attempts_mcp_server_instead_of_function_tools() -> None:
    parsed = contract(CHAT.replace("  model: m\n", "  model: m\n  api: responses\n"))
    body = responses.build_request(parsed.agent, parsed.scenarios[0], 100, "http://127.0.0.1:5/mcp/t")
    assert body["tools"] == [
        {"type": "mcp", "server_label": "behavegate", "server_url": "http://127.0.0.1:5/mcp/t", "require_approval": "never"}
    ]


def test_a_responses_agent_that_calls_the_served_mcp_server_is_judged_on_those_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def responses(request: Request) -> dict[str, Any]:
        """A Responses API server that runs the request's MCP tool itself, as OpenAI's does."""
        (tool,) = request.json()["tools"]
        texts = run_tools(tool["server_url"], [("lookup_order", {"order_id": "A-1"}), ("issue_refund", {})])
        output = [
            {"type": "mcp_call", "name": "lookup_order", "server_label": tool["server_label"], "output": texts[0]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A-1 shipped"}]},
        ]
        return {"status": "completed", "output": output}

    text = REFUND.replace(HTTP_AGENT, f"version: 2\nagent:\n  model: m\n  api: responses\n  mcp: {{serve: true}}\n{TOOLS}")
    code, report = verdicts(tmp_path, text, responses)
    capsys.readouterr()
    found = statuses(report)
    assert found["tools.required[0]"] == "pass" and found["tools.forbidden[0]"] == "fail"
    assert found["response.uses_tool_result[0]"] == "pass"
    assert code == 1


def test_a_huge_body_and_a_flood_on_an_attempts_path_are_refused_and_record_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("behavegate.evidence.mcp_server.MCP_MAX_REQUESTS", 3)
    parsed = contract(REFUND)

    async def hostile() -> tuple[list[int], int]:
        server = ToolServer(parsed.agent, "127.0.0.1")
        async with server.running(), server.attempt(parsed.scenarios[0]) as tools, httpx.AsyncClient() as http:
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "issue_refund", "arguments": {}}}
            huge = json.dumps({**call, "padding": "x" * (2 * 1024 * 1024)})
            codes = [(await http.post(tools.url, content=huge, headers={"content-type": "application/json"})).status_code]
            for _ in range(3):
                codes.append((await http.post(tools.url, json=call)).status_code)
            return codes, len(tools.calls)

    codes, recorded = asyncio.run(hostile())
    assert codes[0] == 413 and codes[-1] == 429
    assert recorded <= 2  # only requests within the bound can be calls
