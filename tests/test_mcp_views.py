"""Tool-side evidence (agent.mcp) is marked as such in every view, and the run directory
records it: a live run against an agent that runs its tools over behavegate's MCP server is
replayed, with the agent and the server gone, to the same verdicts. Real loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_agent import serve
from mcp_agents import REFUND, runs_over_mcp

from behavegate.cli import main
from behavegate.model import TOOL_SIDE

MARK = f"called ({TOOL_SIDE}): lookup_order, issue_refund"
VIEWS = ("--report", "r.json", "--junit", "r.xml", "--summary", "r.md", "--html", "r.html", "--save-observations", "obs.json")


REFUNDS = runs_over_mcp([("lookup_order", {"order_id": "A-1"}), ("issue_refund", {"order_id": "A-1"})])


def statuses(report: dict[str, object]) -> dict[str, dict[str, str]]:
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    return {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in scenarios}


def test_every_view_marks_tool_side_evidence_and_the_run_replays_to_the_same_verdicts_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(REFUND)
    with serve(REFUNDS, "/run") as url:
        code = main(["test", "contract.yml", "--endpoint", url, *VIEWS])
    terminal = capsys.readouterr().out
    assert code == 1
    live = json.loads((tmp_path / "r.json").read_text())
    observation = live["scenarios"][0]["observation"]
    assert observation["tool_source"] == "mcp"  # JSON: on every attempt's observation
    assert any(TOOL_SIDE in note for note in live["behavegate"]["notes"])
    assert MARK in terminal
    for view in ("r.xml", "r.md"):
        assert MARK in (tmp_path / view).read_text(), view
    assert f"Tool calls {TOOL_SIDE}" in (tmp_path / "r.html").read_text().replace("&#39;", "'")

    # The agent and the MCP server are gone: the run directory alone gives the verdicts back.
    run_dir = live["behavegate"]["run_dir"]
    assert main(["replay", run_dir]) == 0
    assert main(["show", run_dir]) == 0
    shown = capsys.readouterr().out
    assert "valid" in shown and f"tool calls: 2 ({TOOL_SIDE})" in shown
    assert main(["replay", run_dir, "--format", "json"]) == 0
    capsys.readouterr()
    # The saved observations judged offline: the same verdicts, still marked.
    assert main(["test", "contract.yml", "--observations", "obs.json", "--report", "again.json", "--no-artifacts"]) == 1
    capsys.readouterr()
    again = json.loads((tmp_path / "again.json").read_text())
    assert statuses(again) == statuses(live)
    assert again["scenarios"][0]["observation"]["tool_source"] == "mcp"
