"""Possible loops and suite floors as every view shows them: a loop is listed by the
table, summary, HTML, JUnit and SARIF (flagged secrets masked); a scenario that failed
under a suite floor is never called a pass."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from behavegate.cli import main

SECRET = "sk-live-4eC39HqLyjWDarjtT1zdp7dc"
LOOP_CONTRACT = textwrap.dedent("""\
    version: 2
    agent:
      model: m
      tools:
        - {name: lookup_order, description: Look an order up, parameters: {type: object}}
    scenarios:
      - id: quiet-loop
        prompt: hi
        max_turns: 3
        tool_results:
          - {name: lookup_order, content: ok}
        expect:
          tools: {max_calls: 5}
      - id: leaky-loop
        prompt: hi
        max_turns: 3
        tool_results:
          - {name: lookup_order, content: ok}
        expect:
          safety: {pii: [api_key]}
    """)


def _looping(scenario: str, arguments: dict[str, Any]) -> dict[str, Any]:
    calls = [{"name": "lookup_order", "arguments": arguments}] * 3
    results = [{"call": i, "name": "lookup_order", "content": "ok"} for i in range(3)]
    return {"id": scenario, "response": None, "finish_reason": "tool_calls", "response_complete": False,
            "tool_calls_complete": True, "tool_calls": calls,
            "conversation": {"turns": 3, "max_turns": 3, "possible_loop": True, "results": results}}  # fmt: skip


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, contract: str, observations: dict[str, Any]) -> int:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(contract)
    (tmp_path / "o.json").write_text(json.dumps(observations))
    return main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--html", "r.html", "--junit", "j.xml",
                 "--sarif", "r.sarif", "--summary", "s.md", "--output", "table.txt"])  # fmt: skip


def test_a_possible_loop_reaches_every_view_with_flagged_secrets_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    observations = {"version": 2, "scenarios": [_looping("quiet-loop", {"a": 1}), _looping("leaky-loop", {"t": SECRET})]}
    assert _run(tmp_path, monkeypatch, LOOP_CONTRACT, observations) == 1
    capsys.readouterr()
    views = {name: (tmp_path / name).read_text() for name in ("r.html", "j.xml", "r.sarif", "s.md", "table.txt")}
    for name, text in views.items():
        assert SECRET not in text, name
        assert text.lower().count("possible loop") >= 2, name  # both scenarios, the passing one included
    html = views["r.html"]
    assert "Possible loop in attempt 1 of 1: the agent was still calling tools when max_turns (3) ran out" in html
    assert "possible loop in attempt 1: the agent was still calling tools" in views["j.xml"]
    sarif = json.loads(views["r.sarif"])["runs"][0]
    notes = [r for r in sarif["results"] if r["ruleId"] == "conversation.possible_loop"]
    assert [(n["level"], n["properties"]["scenario"], n["properties"]["scenarioStatus"]) for n in notes] == [
        ("note", "quiet-loop", "pass"),
        ("note", "leaky-loop", "fail"),
    ]
    assert notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 7  # the scenario's line
    rule = next(r for r in sarif["tool"]["driver"]["rules"] if r["id"] == "conversation.possible_loop")
    assert rule["defaultConfiguration"]["level"] == "note" and "max_turns" in rule["help"]["text"]


def test_a_scenario_without_a_loop_shows_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done = {**_looping("quiet-loop", {"a": 1}), "response": "done", "finish_reason": "stop", "response_complete": True}
    done["conversation"] = {**done["conversation"], "possible_loop": False}
    contract = LOOP_CONTRACT.split("  - id: leaky-loop")[0]
    assert _run(tmp_path, monkeypatch, contract, {"version": 2, "scenarios": [done]}) == 0
    capsys.readouterr()
    for name in ("r.html", "j.xml", "r.sarif", "s.md", "table.txt"):
        assert "possible loop" not in (tmp_path / name).read_text().lower(), name
