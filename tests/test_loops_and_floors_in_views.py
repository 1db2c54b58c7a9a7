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
    return {
        "id": scenario,
        "response": None,
        "finish_reason": "tool_calls",
        "response_complete": False,
        "tool_calls_complete": True,
        "tool_calls": calls,
        "conversation": {"turns": 3, "max_turns": 3, "possible_loop": True, "results": results},
    }


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, contract: str, observations: dict[str, Any]) -> int:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(contract)
    (tmp_path / "o.json").write_text(json.dumps(observations))
    return main(
        [
            "test",
            "c.yml",
            "--observations",
            "o.json",
            "--no-artifacts",
            "--html",
            "r.html",
            "--junit",
            "j.xml",
            "--sarif",
            "r.sarif",
            "--summary",
            "s.md",
            "--output",
            "table.txt",
            "--annotations",
        ]
    )


def test_a_possible_loop_reaches_every_view_with_flagged_secrets_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    observations = {"version": 2, "scenarios": [_looping("quiet-loop", {"a": 1}), _looping("leaky-loop", {"t": SECRET})]}
    assert _run(tmp_path, monkeypatch, LOOP_CONTRACT, observations) == 1
    views = {name: (tmp_path / name).read_text() for name in ("r.html", "j.xml", "r.sarif", "s.md", "table.txt")}
    views["annotations"] = capsys.readouterr().out
    assert (
        "::notice file=c.yml,line=7,title=behavegate possible loop%3A quiet-loop::possible loop in attempt 1"
        in views["annotations"]
    )
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
    assert "possible loop" not in capsys.readouterr().out.lower()
    for name in ("r.html", "j.xml", "r.sarif", "s.md", "table.txt"):
        assert "possible loop" not in (tmp_path / name).read_text().lower(), name


FLOOR_CONTRACT = textwrap.dedent("""\
    version: 2
    agent: {model: m}
    gates:
      min_pass_rate: 0.3
      by_tag:
        safety: {min_pass_rate: 1.0}
    scenarios:
      - id: leak
        tags: [safety]
        prompt: hi
        expect:
          response: {contains: [ok]}
      - id: flaky
        prompt: hi
        expect:
          response: {contains: [ok]}
      - id: fine
        prompt: hi
        expect:
          response: {contains: [ok]}
    """)


def _answer(scenario: str, text: str) -> dict[str, Any]:
    return {"id": scenario, "response": text, "finish_reason": "stop", "response_complete": True, "tool_calls_complete": True}


def _floor_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leak: str) -> tuple[int, dict[str, Any]]:
    observations = {"version": 2, "scenarios": [_answer("leak", leak), _answer("flaky", "no"), _answer("fine", "ok")]}
    code = _run(tmp_path, monkeypatch, FLOOR_CONTRACT, observations)
    import xml.etree.ElementTree as ET

    cases = {str(case.get("name")): case for case in ET.parse(tmp_path / "j.xml").getroot().iter("testcase")}
    return code, cases


def test_a_failed_scenario_under_a_suite_floor_that_passed_is_never_called_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, cases = _floor_run(tmp_path, monkeypatch, leak="ok")
    capsys.readouterr()
    assert code == 0  # the floor (66.7% >= 30%) and the safety gate pass: flaky's failure is within the floor
    html = (tmp_path / "r.html").read_text()
    assert "counted pass" not in html
    said = "failed; the suite floor decides the run, and the gates that count it passed: see gates"
    assert said in html
    flaky = cases["flaky"]
    # Not a <failure> (a JUnit reader would turn a passing run red), and not a plain pass either.
    assert flaky.find("failure") is None and flaky.find("error") is None
    skipped = flaky.find("skipped")
    assert skipped is not None and skipped.get("message") == said
    assert list(cases["fine"]) == [cases["fine"].find("system-out")]


def test_a_failing_tag_gate_makes_the_scenarios_it_counts_fail_in_every_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, cases = _floor_run(tmp_path, monkeypatch, leak="no")
    capsys.readouterr()
    assert code == 1  # the floor passes (33.3% >= 30%), tag[safety] fails because leak failed
    said = "failed; the suite floor decides the run: see gates; of the gates that count it, tag gate tag[safety].min_pass_rate failed"
    failure = cases["leak"].find("failure")
    assert failure is not None and failure.get("message", "").startswith(said + "; response.contains[0] (line 12)")
    assert cases["flaky"].find("skipped") is not None  # only the floor counts it, and the floor passed
    assert said in (tmp_path / "r.html").read_text()
    monkeypatch.chdir(tmp_path)
    main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--annotations"])
    annotations = capsys.readouterr().out
    assert "::error file=c.yml,line=12,title=behavegate fail%3A leak response.contains[0]::" in annotations
    assert "::warning file=c.yml,line=16,title=behavegate fail%3A flaky response.contains[0]::" in annotations


def test_views_render_the_derived_facts_and_compute_none_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Judge once, views render: the PII detectors behind a mask, the loop check and the
    graded scores run as often with every view asked for as with none."""
    from behavegate.judge import gaps, safety_checks, scores

    calls: dict[str, int] = {}

    def counted(module: Any, name: str) -> None:
        original = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for module, name in ((safety_checks, "flagged_values"), (gaps, "possible_loop"), (scores, "group_scores")):
        counted(module, name)
    observations = {"version": 2, "scenarios": [_looping("quiet-loop", {"a": 1}), _looping("leaky-loop", {"t": SECRET})]}
    (tmp_path / "c.yml").write_text(LOOP_CONTRACT)
    (tmp_path / "o.json").write_text(json.dumps(observations))
    monkeypatch.chdir(tmp_path)
    assert main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--format", "json", "--output", "r.json"]) == 1
    bare, calls = dict(calls), {}
    assert _run(tmp_path, monkeypatch, LOOP_CONTRACT, observations) == 1
    capsys.readouterr()
    assert bare["flagged_values"] > 0 and bare["possible_loop"] > 0
    assert calls == bare
