"""Several contracts in one run (a suite): each contract is judged exactly as
alone and is its own testsuite in every report; the run takes the worst status."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import Golden
from helpers import FACTS, ROOT, example_report

from behavegate.cli import main
from behavegate.commands.offline import run_offline
from behavegate.commands.options import RunOptions
from behavegate.contract.load import parse_contract_text
from behavegate.evidence.observation_file import parse_observation_text
from behavegate.render import suite as views
from behavegate.render import table as table_renderer
from behavegate.report.suite import SuiteRun

ORDERS = textwrap.dedent("""\
    version: 2
    agent:
      endpoint: http://127.0.0.1:8765/v1/chat/completions
      model: m
    scenarios:
      - id: order-status
        prompt: Where is order A-1?
        expect:
          response:
            contains: ["shipped"]
      - id: greeting
        prompt: Hello
        expect:
          response:
            contains: ["hello"]
    """)
REFUNDS = textwrap.dedent("""\
    version: 2
    agent:
      endpoint: http://127.0.0.1:8765/v1/chat/completions
      model: m
    scenarios:
      - id: refund
        prompt: Refund me
        expect:
          response:
            excludes: ["refunded"]
    """)


def _observation(scenario: str, response: str) -> dict[str, object]:
    return {
        "id": scenario,
        "response": response,
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [],
        "refusal": False,
    }


SCENARIOS = [
    _observation("order-status", "It shipped."),
    _observation("greeting", "hello there"),
    _observation("refund", "I refunded you."),
]
OBSERVATIONS = {"version": 1, "scenarios": SCENARIOS}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yml").write_text(ORDERS)
    (tmp_path / "contracts" / "refunds.yaml").write_text(REFUNDS)
    (tmp_path / "contracts" / ".hidden.yml").write_text("not: a contract")
    (tmp_path / "contracts" / "notes.txt").write_text("not a contract")
    (tmp_path / "obs.json").write_text(json.dumps(OBSERVATIONS))
    monkeypatch.chdir(tmp_path)
    return tmp_path


FILES = ["contracts/orders.yml", "contracts/refunds.yaml"]
FLAGS = ["--observations", "obs.json", "--no-artifacts"]


def test_two_contracts_share_one_observation_file_and_the_worst_status_decides(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test", *FILES, *FLAGS, "--format", "json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["kind"] == "agent_behavior_suite"
    assert payload["schema_version"] == 1
    assert payload["status"] == "fail"
    assert [c["status"] for c in payload["contracts"]] == ["pass", "fail"]
    assert [c["kind"] for c in payload["contracts"]] == ["agent_behavior", "agent_behavior"]
    assert payload["summary"]["contracts"] == 2
    assert payload["summary"]["scenarios"] == 3
    assert (payload["summary"]["passed"], payload["summary"]["failed"]) == (2, 1)


def test_each_contract_in_the_json_is_its_single_run_report(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["test", *FILES, *FLAGS, "--format", "json"])
    contracts = json.loads(capsys.readouterr().out)["contracts"]
    (project / "refund.json").write_text(json.dumps({"version": 1, "scenarios": [SCENARIOS[2]]}))
    assert main(["test", "contracts/refunds.yaml", "--observations", "refund.json", "--no-artifacts", "--format", "json"]) == 1
    alone = json.loads(capsys.readouterr().out)
    # The same facts apart from the run's clock and id.
    assert contracts[1]["scenarios"] == alone["scenarios"]
    assert contracts[1]["summary"] == alone["summary"]


def test_junit_holds_one_testsuite_per_contract_with_its_file(project: Path) -> None:
    assert main(["test", *FILES, *FLAGS, "--junit", "junit.xml", "--summary", "summary.md", "--report", "r.json"]) == 1
    root = ET.parse(project / "junit.xml").getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("file") for s in suites] == FILES
    assert [len(s.findall("testcase")) for s in suites] == [2, 1]
    assert suites[1].find("testcase/failure") is not None
    summary = (project / "summary.md").read_text()
    assert summary.startswith("# ❌ behavegate suite: fail")
    assert summary.count("### Contract") == 2
    assert json.loads((project / "r.json").read_text())["kind"] == "agent_behavior_suite"


def test_a_folder_is_the_same_as_listing_its_contract_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "contracts", *FLAGS, "--format", "json"]) == 1
    from_folder = json.loads(capsys.readouterr().out)
    assert main(["test", *FILES, "contracts/orders.yml", *FLAGS, "--format", "json"]) == 1
    listed = json.loads(capsys.readouterr().out)
    assert [c["contract"]["path"] for c in from_folder["contracts"]] == [str(project / f) for f in FILES]
    assert [c["scenarios"] for c in from_folder["contracts"]] == [c["scenarios"] for c in listed["contracts"]]


def test_an_observation_in_no_contract_is_still_an_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evidence = {"version": 1, "scenarios": [*SCENARIOS, _observation("stranger", "x")]}
    (project / "obs.json").write_text(json.dumps(evidence))
    assert main(["test", *FILES, *FLAGS]) == 2
    assert "observations contain scenarios not defined by the contract: ['stranger']" in capsys.readouterr().err


def test_a_contract_that_cannot_be_loaded_stops_the_run_and_is_named(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "contracts" / "broken.yml").write_text("version: 2\nscenarios: nope\n")
    assert main(["test", "contracts", *FLAGS]) == 2
    assert "contracts/broken.yml" in capsys.readouterr().err


def test_one_file_named_twice_is_a_single_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "orders.json").write_text(json.dumps({"version": 1, "scenarios": SCENARIOS[:2]}))
    assert (
        main(["test", "contracts/orders.yml", "./contracts/orders.yml", "--observations", "orders.json", "--no-artifacts"]) == 0
    )
    assert capsys.readouterr().out.startswith("Agent behavior test: pass")


def test_flags_of_one_contract_are_refused_for_a_suite(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", *FILES, *FLAGS, "--scenario", "refund"]) == 2
    assert "--scenario takes one contract" in capsys.readouterr().err


def test_each_contract_writes_its_own_run_directory_and_outputs_sum_them(project: Path) -> None:
    assert main(["test", *FILES, "--observations", "obs.json", "--github-output", "out.txt", "--annotations"]) == 1
    assert len(list((project / ".behavegate" / "runs").iterdir())) == 2
    text = (project / "out.txt").read_text()
    assert "status=fail\n" in text and "passed=2\n" in text and "failed=1\n" in text
    assert text.count(".behavegate/runs/") == 2


def _suite() -> SuiteRun:
    reports = []
    for name, text in (("orders.yml", ORDERS), ("refunds.yaml", REFUNDS)):
        contract = parse_contract_text(text, ROOT / name, ROOT)
        evidence = parse_observation_text(json.dumps(OBSERVATIONS), ROOT / "obs.json", attempts=True)
        ids = set(contract.scenario_ids())
        evidence = type(evidence)(
            evidence.path,
            evidence.digest,
            {k: v for k, v in evidence.observations.items() if k in ids},
            evidence.version,
            {k: v for k, v in evidence.attempts.items() if k in ids},
        )
        reports.append(run_offline(contract, evidence, RunOptions(), FACTS, display_path=name))
    return SuiteRun(tuple(reports))


def test_suite_table_matches_golden(golden: Golden) -> None:
    golden.check("suite-table.txt", views.table(_suite()) + "\n")


def test_suite_json_matches_golden(golden: Golden) -> None:
    golden.check("suite-report.json", views.report_json(_suite()) + "\n")


def test_each_contract_table_in_a_suite_is_its_single_table() -> None:
    suite = _suite()
    text = views.table(suite)
    for report in suite.reports:
        assert table_renderer.render(report) in text


def test_suite_annotations_stay_at_ten_a_level() -> None:
    report = example_report("regressed")
    lines = views.annotation_commands(SuiteRun((report,) * 5)).split("\n")
    assert sum(line.startswith("::error") for line in lines) <= 10
    assert sum(line.startswith("::warning") for line in lines) <= 10


def test_suite_summary_stays_under_its_limit_with_a_note() -> None:
    report = example_report("regressed")
    text = views.summary(SuiteRun((report,) * 6), limit=40_000)
    assert len(text.encode()) <= 40_000
    assert "left out" in text


def test_traces_of_another_contract_are_not_unbound_in_a_suite(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from helpers import EXAMPLE

    (project / "refund-agent.yml").write_text((EXAMPLE / "contract-v2.yml").read_text())
    (project / "good.jsonl").write_text((EXAMPLE / "traces" / "good.jsonl").read_text())
    flags = ["--traces", "good.jsonl", "--no-artifacts", "--format", "json"]
    main(["test", "contracts/orders.yml", "refund-agent.yml", *flags])
    orders, refund_agent = json.loads(capsys.readouterr().out)["contracts"]
    counts = orders["provenance"]["traces"]
    assert counts["other_scenarios"] == 3  # refund-agent's; "order-status" is in both contracts, bound in each
    # A trace naming a scenario of no contract is unbound for every contract of the suite.
    assert orders["provenance"]["unbound_traces"]["count"] == refund_agent["provenance"]["unbound_traces"]["count"] == 1
    assert counts["bound"] + counts["other_scenarios"] + 1 == counts["genai"]
    main(["test", "contracts/orders.yml", *flags])
    alone = json.loads(capsys.readouterr().out)["provenance"]
    assert alone["unbound_traces"]["count"] > 1
    assert alone["traces"]["other_scenarios"] == 0


def test_a_folder_without_contract_files_is_refused_as_before(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "empty").mkdir()
    assert main(["test", "empty", *FLAGS]) == 2
    assert "empty is not" in capsys.readouterr().err


def test_max_seconds_is_the_whole_suites_budget(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    ticks = iter([0.0, 0.0, 400.0])  # start, before the first contract, before the second: 400 s spent
    monkeypatch.setattr(time, "monotonic", lambda: next(ticks, 400.0))
    assert main(["test", *FILES, *FLAGS, "--max-seconds", "300"]) == 2
    err = capsys.readouterr().err
    assert "the suite's time budget of 300s (--max-seconds) was spent before this contract" in err
    assert f"suite stopped at contract {FILES[1]}" in err
