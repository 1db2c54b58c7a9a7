"""Observation-file consistency rules (issue 27): a version-2 entry that breaks one is an
incomplete attempt naming the rule, and its scenario is decided from the other attempts;
version 1 keeps skylos's hard error. docs/observations.md's table is the code's rules."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from behavegate.cli import main
from behavegate.evidence.consistency import RULES

ROOT = Path(__file__).resolve().parents[1]

CONTRACT = """\
version: 2
agent:
  tools:
    - name: lookup_order
      description: Fetch an order by its id
      parameters: {type: object, properties: {order_id: {type: string}}}
scenarios:
  - id: order-status
    prompt: Where is my order A-1001?
    runs: 40
    min_pass_rate: 0.85
    sequential: true
    expect:
      tools:
        required: [lookup_order]
      response:
        contains: [A-1001]
"""

GOOD: dict[str, Any] = {
    "id": "order-status",
    "response": "Order A-1001 shipped.",
    "finish_reason": "stop",
    "response_complete": True,
    "tool_calls_complete": True,
    "tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A-1001"}}],
}
# "length" rules out complete tool calls: the third entry contradicts itself
INCONSISTENT = {**GOOD, "finish_reason": "length", "response_complete": False, "tool_calls_complete": True}


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], entries: list[dict[str, Any]], version: int) -> tuple[int, Any]:
    (tmp_path / "contract.yml").write_text(CONTRACT)
    (tmp_path / "obs.json").write_text(json.dumps({"version": version, "scenarios": entries}))
    code = main(["test", "contract.yml", "--observations", "obs.json", "--format", "json", "--no-artifacts"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else out.err


def test_a_recorded_sequential_run_with_one_inconsistent_attempt_is_decided_from_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, report = _run(tmp_path, capsys, [GOOD, GOOD, INCONSISTENT] + [GOOD] * 9, version=2)
    [scenario] = report["scenarios"]
    assert code == 0 and scenario["status"] == "pass"
    reliability = scenario["reliability"]
    # At 0.85 the boundary passes at 10 of 10 judged: attempts 1-2 and 4-11; attempt 3 moved neither count.
    assert (reliability["passed"], reliability["failed"], reliability["incomplete"]) == (10, 0, 1)
    assert reliability["sequential"]["used"] == 11 and reliability["sequential"]["decided_by"] == "boundary"
    assert reliability["unused"] == 1
    statuses = [attempt["status"] for attempt in scenario["attempts"]]
    assert statuses == ["pass", "pass", "incomplete"] + ["pass"] * 8
    reason = (
        "scenario observation failed: observation_inconsistent: attempt 3, scenarios[2].tool_calls_complete "
        "conflicts with finish_reason (rule tool_calls_complete-finish_reason)"
    )
    assert {a["message"] for a in scenario["attempts"][2]["assertions"]} == {reason}


def test_every_attempt_inconsistent_leaves_the_scenario_incomplete_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    missing_flag = {k: v for k, v in GOOD.items() if k != "response_complete"}
    code, report = _run(tmp_path, capsys, [missing_flag, INCONSISTENT], version=2)
    [scenario] = report["scenarios"]
    assert code == 2 and scenario["status"] == "incomplete"
    recorded = scenario["attempts"][:2]  # the rest of the 40 were never observed
    assert [a["observation"]["error"].split(" (rule ")[1] for a in recorded] == [
        "response_complete-finish_reason)",
        "tool_calls_complete-finish_reason)",
    ]


def test_version_1_files_keep_skylos_hard_error_for_the_same_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under a version-2 contract too: a version-1 file keeps version-1 rules."""
    monkeypatch.chdir(tmp_path)
    code, report = _run(tmp_path, capsys, [GOOD, GOOD, INCONSISTENT], version=1)
    assert code == 2 and report["error"] == "scenarios[2].tool_calls_complete conflicts with finish_reason"
    assert "scenarios" not in report or not report["scenarios"]  # refused: nothing judged


def _documented_rules() -> list[tuple[str, str]]:
    page = (ROOT / "docs" / "observations.md").read_text(encoding="utf-8")
    table = page.split("<!-- consistency-rules -->\n", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    found = []
    for row in rows:
        rule, holds, v1, v2 = (cell.strip() for cell in row.strip("|").split("|"))
        assert v1 and v2, row  # each rule states both versions' behaviour
        found.append((rule.strip("`"), holds))
    return found


def test_the_documented_consistency_rules_are_the_code_s_rules() -> None:
    assert _documented_rules() == list(RULES.items())


def test_every_consistency_rule_is_checked_somewhere() -> None:
    source = "".join(p.read_text() for p in (ROOT / "src" / "behavegate" / "evidence").glob("*.py") if p.name != "consistency.py")
    assert [rule for rule in RULES if not re.search(rf'"{re.escape(rule)}"', source)] == []
