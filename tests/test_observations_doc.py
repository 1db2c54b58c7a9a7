"""docs/observations.md is true: its hand-written observation files load through
the CLI against its contracts with the verdicts it states, and the rules it
states (completion flags, string arguments) hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doc_examples import examples

from behavegate.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in examples("observations.md").items():
        (tmp_path / f"{name}.{'yml' if name.startswith('contract') else 'json'}").write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def judge(version: int, capsys: pytest.CaptureFixture[str], observations: str | None = None) -> tuple[int, Any]:
    observations = observations or f"observations-v{version}.json"
    code = main(["test", f"contract-v{version}.yml", "--observations", observations, "--report", "r.json", "--no-artifacts"])
    capsys.readouterr()
    return code, json.loads(Path("r.json").read_text())


def verdicts(assertions: list[dict[str, str]]) -> dict[str, str]:
    return {a["assertion"]: a["status"] for a in assertions}


def test_the_version_1_example_passes_one_scenario_and_fails_the_other(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = judge(1, capsys)
    scenarios = {s["id"]: s for s in report["scenarios"]}
    assert code == 1
    assert verdicts(scenarios["order-status"]["assertions"]) == {
        "response.contains[0]": "pass",
        "tools.required[0]": "pass",
        "sources.required[0]": "pass",
    }
    assert verdicts(scenarios["refund-needs-a-human"]["assertions"]) == {"tools.forbidden[0]": "fail", "refusal": "fail"}


def test_the_version_2_example_is_two_attempts_one_passing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = judge(2, capsys)
    [scenario] = report["scenarios"]
    assert code == 1 and scenario["status"] == "fail"
    first, second = scenario["attempts"]
    assert first["status"] == "pass"
    assert first["observation"]["tool_calls"] == [{"name": "lookup_order", "arguments": {"order_id": "A-1001"}}]
    failed = {k for k, v in verdicts(second["assertions"]).items() if v == "fail"}
    assert failed == {"tools.no_errors", "response.icontains[0]", "latency.max_ms"}
    assert scenario["reliability"]["passed"] == 1 and scenario["reliability"]["runs"] == 2


def test_version_1_refuses_string_arguments_and_a_missing_completion_flag(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    observations = json.loads((project / "observations-v1.json").read_text())
    observations["scenarios"][0]["tool_calls"][0]["arguments"] = '{"order_id": "A-1001"}'
    del observations["scenarios"][1]["response_complete"]
    (project / "edited.json").write_text(json.dumps(observations))
    code = main(["test", "contract-v1.yml", "--observations", "edited.json", "--no-artifacts"])
    err = capsys.readouterr().err
    assert code == 2
    # Where and why; the wording around them is the error report's.
    assert "scenarios[0].tool_calls[0].arguments" in err and "must be a mapping" in err
    assert "scenarios[1].response_complete" in err and "conflicts with finish_reason" in err


def test_version_2_refuses_string_arguments_that_do_not_hold_an_object(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    observations = json.loads((project / "observations-v2.json").read_text())
    observations["scenarios"][0]["tool_calls"][0]["arguments"] = '["A-1001"]'
    observations["scenarios"][1]["tool_calls"][0]["arguments"] = '{"order_id": "A", "order_id": "B"}'
    (project / "edited.json").write_text(json.dumps(observations))
    code = main(["test", "contract-v2.yml", "--observations", "edited.json", "--no-artifacts"])
    err = capsys.readouterr().err
    assert code == 2
    assert "scenarios[0].tool_calls[0].arguments" in err and "scenarios[1].tool_calls[0].arguments" in err
    assert "must be a JSON object, or a string holding one" in err
