"""An MCP server as the target (``agent.api: mcp``): each scenario calls one tool with fixed
arguments and judges the result; the text content is the response, ``isError`` a failed call.
The server is a real one, written with the official SDK's MCPServer (FastMCP), on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import contract
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_agents import mcp_served

from behavegate.cli import main
from behavegate.errors import ContractError

CONTRACT = """version: 2
agent:
  api: mcp
  timeout_seconds: 10
scenarios:
  - id: shipped
    call: {tool: lookup_order, arguments: {order_id: A-1}}
    expect:
      response: {contains: [shipped], excludes: [lost]}
      tools: {no_errors: true, required: [{name: lookup_order, arguments: {order_id: A-1}}]}
  - id: unknown-order
    call: {tool: lookup_order, arguments: {order_id: Z-9}}
    expect: {tools: {no_errors: true}}
  - id: no-such-tool
    call: {tool: delete_order}
    expect: {tools: {no_errors: true}}
  - id: says-lost
    runs: 2
    call: {tool: lookup_order, arguments: {order_id: B-2}}
    expect: {response: {contains: [shipped]}}
"""


def orders() -> MCPServer:
    server = MCPServer("orders")

    @server.tool(description="Look an order up.")
    def lookup_order(order_id: str) -> str:
        known = {"A-1": "shipped", "B-2": "lost"}
        if order_id not in known:
            raise ToolError(f"no such order: {order_id}")  # the text the caller sees, isError: true
        return f"{order_id}: {known[order_id]}"

    return server


def run(tmp_path: Path, url: str, *extra: str) -> tuple[int, dict[str, Any]]:
    (tmp_path / "contract.yml").write_text(CONTRACT)
    code = main(["test", "contract.yml", "--endpoint", url, "--report", "r.json", "--no-artifacts", *extra])
    return code, json.loads((tmp_path / "r.json").read_text())


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_each_scenario_calls_the_servers_tool_and_is_judged_on_its_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with mcp_served(orders()) as url:
        code, report = run(tmp_path, url, "--concurrency", "4")
    capsys.readouterr()
    found = {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in report["scenarios"]}
    assert found == {
        "shipped": {
            "response.contains[0]": "pass",
            "response.excludes[0]": "pass",
            "tools.required[0]": "pass",
            "tools.no_errors": "pass",
        },
        "unknown-order": {"tools.no_errors": "fail"},  # isError: true
        "no-such-tool": {"tools.no_errors": "fail"},
        "says-lost": {"response.contains[0]": "fail"},
    }
    observation = report["scenarios"][1]["observation"]
    assert "no such order: Z-9" in observation["tool_errors"][0]
    assert report["scenarios"][0]["observation"]["response"] == "A-1: shipped"
    assert report["provenance"]["mcp_target"]["transport"] == "streamable-http"
    assert code == 1


def test_an_unreachable_mcp_target_leaves_every_attempt_incomplete_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = run(tmp_path, "http://127.0.0.1:9/mcp")
    capsys.readouterr()
    assert {s["status"] for s in report["scenarios"]} == {"incomplete"}
    assert "MCP call lookup_order failed" in json.dumps(report["scenarios"][0])
    assert code == 2


@pytest.mark.parametrize(
    ("old", "new", "path", "message"),
    [
        ("  api: mcp\n", "  model: m\n", "scenarios[0].call", "needs agent.api: mcp"),
        ("    call: {tool: delete_order}\n", "    prompt: hi\n", "scenarios[2].call", "is required"),
        ("{tool: delete_order}", "{tool: delete_order, args: {}}", "scenarios[2].call.args", "Unknown behavior contract key"),
        ("  api: mcp\n", "  api: mcp\n  mcp: {serve: true}\n", "agent.mcp", "is not for api: mcp"),
    ],
)
def test_contract_problems_of_call_are_named_with_their_path(old: str, new: str, path: str, message: str) -> None:
    with pytest.raises(ContractError) as error:
        contract(CONTRACT.replace(old, new))
    assert any(p.path == path and message in p.text for p in error.value.problems), error.value.problems


def test_the_editor_schema_accepts_a_contract_that_calls_instead_of_prompting() -> None:
    import jsonschema
    import yaml

    from behavegate.contract.json_schema import schema

    jsonschema.Draft202012Validator(schema()).validate(yaml.safe_load(CONTRACT))
