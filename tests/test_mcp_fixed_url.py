"""``agent.mcp.url: fixed``: an agent configured once with one MCP URL has its attempts run
one at a time, each holding the URL while it runs, and the report says so. Real loopback."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import httpx
import pytest
from fake_agent import Request, serve
from helpers import contract
from mcp_agents import FIXED, free_port, run_tools

from behavegate.cli import main
from behavegate.commands.live_run import FIXED_URL_NOTE
from behavegate.errors import ContractError
from behavegate.evidence.mcp_server import ToolServer


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_an_agent_with_one_fixed_mcp_url_has_its_attempts_run_one_at_a_time_and_the_report_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    lock = threading.Lock()
    seen = {"now": 0, "most": 0}

    configured_url = f"http://127.0.0.1:{port}/mcp"

    def configured(request: Request) -> dict[str, str]:
        """Configured once with the URL: it never reads the header behavegate sends."""
        with lock:
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
        texts = run_tools(configured_url, [("lookup_order", {"order_id": request.json()["input"]})])
        with lock:
            seen["now"] -= 1
        return {"output": " ".join(texts)}

    (tmp_path / "contract.yml").write_text(FIXED)
    with serve(configured, "/run") as url:
        args = ["test", "contract.yml", "--endpoint", url, "--mcp-port", str(port), "--concurrency", "6"]
        code = main([*args, "--no-artifacts", "--report", "r.json"])
    capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text())
    assert seen["most"] == 1
    # Each attempt's window held its own call only: one call each, with its own order id.
    assert [s["status"] for s in report["scenarios"]] == ["pass", "pass"], report["scenarios"]
    assert FIXED_URL_NOTE in report["behavegate"]["notes"]
    assert report["provenance"]["mcp_tool_server"]["paths"] == "one fixed path, /mcp, attempts one at a time"
    assert report["provenance"]["mcp_tool_server"]["port"] == port
    assert code == 0


def test_a_call_on_the_fixed_url_outside_any_attempt_is_refused_and_never_evidence() -> None:
    parsed = contract(FIXED)
    lookup = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup_order", "arguments": {}}}

    async def served() -> tuple[list[int], list[str]]:
        server = ToolServer(parsed.agent, "127.0.0.1", free_port())
        codes = []
        async with server.running(), httpx.AsyncClient() as http:
            codes.append((await http.post(server.fixed_url(), json=lookup)).status_code)  # before any attempt
            async with server.attempt(parsed.scenarios[0]) as first:
                await asyncio.to_thread(run_tools, server.fixed_url(), [("lookup_order", {"order_id": "A-1"})])
            codes.append((await http.post(server.fixed_url(), json=lookup)).status_code)  # between attempts
            async with server.attempt(parsed.scenarios[1]) as second:
                codes.append((await http.post(server.base_url() + "token", json=lookup)).status_code)  # not the fixed path
        return codes, [(c.call.arguments or {})["order_id"] for c in first.calls + second.calls]

    codes, recorded = asyncio.run(served())
    assert codes == [404, 404, 404]
    assert recorded == ["A-1"]


def test_a_fixed_url_without_a_port_is_refused_before_anything_is_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(FIXED)
    assert main(["test", "contract.yml", "--endpoint", "http://127.0.0.1:9/run"]) == 2
    assert "agent.mcp.url: fixed needs --mcp-port PORT" in capsys.readouterr().err


def test_an_unknown_agent_mcp_url_mode_is_a_contract_error_with_its_line() -> None:
    with pytest.raises(ContractError) as error:
        contract(FIXED.replace("url: fixed", "url: sometimes"))
    assert any(p.path == "agent.mcp.url" and p.line == 3 and "per_attempt" in p.text for p in error.value.problems)
