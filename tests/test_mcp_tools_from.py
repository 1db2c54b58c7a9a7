"""``agent.tools_from: {mcp: URL}``: the agent's tools read from a real MCP server's
``tools/list`` (one written with the official SDK, on loopback), so tools.arguments_valid and
tools.known_only check the schemas the agent is really given; the URL under the endpoint trust
rules; every failure a configuration error naming the URL, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import contract
from mcp.server.mcpserver import MCPServer
from mcp_agents import mcp_served

from behavegate.cli import main
from behavegate.errors import ContractError

CONTRACT = """version: 2
agent:
  tools_from: {{mcp: "{url}"}}
scenarios:
  - id: refund
    prompt: Refund A-1.
    available_tools: [lookup_order, issue_refund]
    expect: {{tools: {{arguments_valid: true, known_only: true}}}}
"""


def orders() -> MCPServer:
    server = MCPServer("orders")

    @server.tool(description="Look an order up.")
    def lookup_order(order_id: str) -> str:
        return f"{order_id}: shipped"

    @server.tool(description="Refund an order.")
    def issue_refund(order_id: str, amount: float) -> str:
        return "refunded"

    return server


def observed(calls: list[dict[str, object]]) -> str:
    return json.dumps(
        {
            "version": 1,
            "scenarios": [
                {
                    "id": "refund",
                    "response": "ok",
                    "response_complete": True,
                    "finish_reason": "stop",
                    "tool_calls": calls,
                    "tool_calls_complete": True,
                }
            ],
        }
    )


@pytest.mark.parametrize(
    ("calls", "valid", "known"),
    [
        ([{"name": "lookup_order", "arguments": {"order_id": "A-1"}}], "pass", "pass"),
        ([{"name": "issue_refund", "arguments": {"order_id": "A-1", "amount": "all"}}], "fail", "pass"),  # amount: a number
        ([{"name": "lookup_order", "arguments": {}}], "fail", "pass"),  # order_id is required by the real schema
        ([{"name": "delete_order", "arguments": {}}], "fail", "fail"),  # the server lists no such tool
    ],
)
def test_the_tools_a_real_mcp_server_lists_are_the_schemas_the_checks_use(
    calls: list[dict[str, object]],
    valid: str,
    known: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "obs.json").write_text(observed(calls))
    with mcp_served(orders()) as url:
        (tmp_path / "contract.yml").write_text(CONTRACT.format(url=url))
        args = ["test", "contract.yml", "--observations", "obs.json", "--tools-mcp", url, "--report", "r.json"]
        main([*args, "--no-artifacts"])
    capsys.readouterr()
    found = {a["assertion"]: a["status"] for a in json.loads((tmp_path / "r.json").read_text())["scenarios"][0]["assertions"]}
    assert found == {"tools.arguments_valid": valid, "tools.known_only": known}


def test_an_unreachable_tools_server_is_a_configuration_error_naming_its_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "obs.json").write_text(observed([]))
    (tmp_path / "contract.yml").write_text(CONTRACT.format(url="http://127.0.0.1:9/mcp"))
    code = main(["test", "contract.yml", "--observations", "obs.json", "--tools-mcp", "http://127.0.0.1:9/mcp"])
    err = capsys.readouterr().err
    assert code == 2
    assert "could not list the tools of http://127.0.0.1:9/mcp" in err and "Traceback" not in err


def test_a_tools_server_in_the_contract_needs_the_same_consent_as_the_agents_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "obs.json").write_text(observed([]))
    (tmp_path / "contract.yml").write_text(CONTRACT.format(url="http://127.0.0.1:9/mcp"))
    assert main(["test", "contract.yml", "--observations", "obs.json"]) == 2
    assert "contract-provided MCP tool server endpoints require --allow-contract-endpoint" in capsys.readouterr().err
    (tmp_path / "contract.yml").write_text(CONTRACT.format(url="http://tools.example.com/mcp"))
    assert main(["test", "contract.yml", "--observations", "obs.json"]) == 2
    assert "remote MCP tool server endpoints must be supplied with trusted --tools-mcp" in capsys.readouterr().err


def test_available_tools_the_server_does_not_list_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "obs.json").write_text(observed([]))
    with mcp_served(orders()) as url:
        (tmp_path / "contract.yml").write_text(CONTRACT.format(url=url).replace("issue_refund]", "wire_money]"))
        assert main(["test", "contract.yml", "--observations", "obs.json", "--tools-mcp", url]) == 2
    assert "available_tools names tools" in capsys.readouterr().err


def test_tools_from_beside_agent_tools_is_a_contract_error() -> None:
    text = CONTRACT.format(url="http://127.0.0.1:9/mcp").replace(
        "agent:\n", "agent:\n  tools: [{name: a, description: b, parameters: {type: object}}]\n"
    )
    with pytest.raises(ContractError) as error:
        contract(text)
    assert any(p.path == "agent.tools_from" and "cannot both be given" in p.text for p in error.value.problems)
