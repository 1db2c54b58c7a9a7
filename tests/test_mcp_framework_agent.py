"""The real-framework example (examples/mcp-framework-agent/): a refund agent on the OpenAI
Agents SDK, its own MCP client pointed at behavegate's MCP server, its API answering text only.
run.py ran it live (good, then regressed) and saved each run's evidence; here the committed
evidence is judged again through the CLI, without the framework, to the verdicts it had live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from behavegate.cli import main

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "mcp-framework-agent"
FIXTURES = REPO / "tests" / "fixtures" / "mcp-framework-agent"


def judged(variant: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    monkeypatch.chdir(REPO)
    args = ["test", "examples/mcp-framework-agent/contract.yml", "--no-artifacts", "--format", "json"]
    code = main([*args, "--observations", str((FIXTURES / f"{variant}.observations.json").relative_to(REPO))])
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return code, report


def statuses(report: dict[str, object]) -> dict[str, dict[str, str]]:
    scenarios = report["scenarios"]
    assert isinstance(scenarios, list)
    return {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in scenarios}


def test_the_good_framework_agent_passes_from_its_tool_side_evidence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = judged("good", monkeypatch, capsys)
    assert {status for checks in statuses(report).values() for status in checks.values()} == {"pass"}
    assert code == 0


def test_the_regressed_framework_agents_forbidden_refund_is_caught_on_the_tool_side(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = judged("regressed", monkeypatch, capsys)
    found = statuses(report)
    assert found["refund-needs-a-human"]["tools.forbidden[0]"] == "fail"
    assert found["refund-needs-a-human"]["tools.required[1]"] == "fail"  # escalate_to_human never landed
    assert set(found["refund-a-broken-order"].values()) == {"pass"}
    assert code == 1


def test_the_recorded_evidence_is_the_mcp_servers_and_the_answers_carry_no_calls() -> None:
    for variant in ("good", "regressed"):
        recorded = json.loads((FIXTURES / f"{variant}.observations.json").read_text())
        for observation in recorded["scenarios"]:
            assert observation["tool_source"] == "mcp", variant
            assert observation["tool_calls"], variant  # every call came from the MCP side: the API returns text only
            assert "tool_calls" not in observation["response"]


def test_the_example_never_becomes_a_dependency_of_behavegate() -> None:
    pins = (EXAMPLE / "requirements.txt").read_text()
    assert "openai-agents==0.24.0" in pins
    project = (REPO / "pyproject.toml").read_text()
    assert "openai-agents" not in project and "pydantic-ai" not in project
