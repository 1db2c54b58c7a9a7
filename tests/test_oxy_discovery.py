"""Oxy test files found without a path, ``--case`` and the Oxy run's messages (issue 16
review findings 3, 4, 7, 8): discovery leaves existing setups as they were, a suite
checks every file before its first request, ``--quiet`` holds in a suite, ``--case``
refuses what is ambiguous, and errors and headlines say what happened."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from fake_agent import FakeAgent, serve
from helpers import ROOT, copy_example, oxy_agent, oxy_judge

from behavegate.cli import main
from behavegate.contract.load import parse_contract_text
from behavegate.contract.oxy import case_matches, declares_cases
from behavegate.errors import ContractError

CONTRACT = """\
version: 2
agent: {endpoint: "URL", model: my-agent}
scenarios:
  - id: ceo
    prompt: Who is the CEO of Apple?
    expect: {response: {contains: [Tim Cook]}}
"""
WORKFLOW = "name: CI\non:\n  push:\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n"
ONE_CASE = 'settings: {runs: 1}\ncases:\n  - {prompt: "Who is the CEO of Apple?", expected: "Tim Cook"}\n'


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["test", *args, "--no-artifacts"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- discovery (finding 3) ------------------------------------------------------------


def test_discovery_skips_vendored_and_output_folders_and_files_that_are_not_oxy_test_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("node_modules/lib/test", "venv/lib", "out", "build", "dist", "target", ".venv", ".git"):
        write(tmp_path / folder / "x.test.yml", "cases: [oops]\n")  # would fail the run if read
    write(tmp_path / "ci" / "workflow.test.yml", WORKFLOW)  # a *.test.yml of another tool, in the project
    with FakeAgent(oxy_agent()) as agent:
        url = agent.url
        write(tmp_path / ".behavegate" / "contract.yml", CONTRACT.replace("URL", url))
        code, out, err = run(["--allow-contract-endpoint"], capsys)
    assert code == 0 and "Agent behavior test: pass" in out and "=== Contract" not in out  # the contract alone, as before
    assert len(agent.requests) == 1
    assert "skipped ci/workflow.test.yml: not an Oxy test file" in err and "node_modules" not in err


def test_a_discovered_file_meant_as_an_oxy_file_is_still_refused_with_its_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.test.yml", "cases:\n  - {prompt: p}\n")
    write(tmp_path / "b.test.yml", 'cases:\n  - prompt: "x\n')  # not even YAML, but it means to be one
    code, _, err = run(["--endpoint", "http://127.0.0.1:9/v1/chat/completions"], capsys)
    assert code == 2 and "cases[0].expected (line 2): is required" in err
    assert declares_cases('cases:\n  - prompt: "x\n') and not declares_cases(WORKFLOW) and not declares_cases("a: [1\n")


def test_a_suite_stops_before_any_request_when_an_oxy_file_has_no_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "fixture.test.yml", ONE_CASE)
    with FakeAgent(oxy_agent()) as agent:
        url = agent.url
        write(tmp_path / ".behavegate" / "contract.yml", CONTRACT.replace("URL", url))
        code, _, err = run(["--allow-contract-endpoint"], capsys)
        assert code == 2 and agent.requests == []  # the contract's scenario was not run first
        assert "fixture.test.yml: an Oxy test file names no agent endpoint: give --endpoint URL" in err
        code, _, err = run(["--endpoint", url], capsys)  # an endpoint, but no judge: still nothing sent
    assert code == 2 and agent.requests == [] and "judge" in err


def test_nothing_found_names_oxy_test_files_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run([], capsys)
    assert code == 2 and "*.test.yml" in err


# --- --quiet in a suite (finding 4) ---------------------------------------------------


def test_quiet_keeps_only_cases_numbers_and_gates_for_every_file_of_a_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    write(tmp_path / "more" / "ceo.test.yml", ONE_CASE)
    with serve(oxy_agent()) as url, serve(oxy_judge) as judge:
        common = ["--endpoint", url, "--judge-endpoint", judge, "--judge-model", "m", "--runs", "1"]
        _, quiet, _ = run([*common, "--quiet"], capsys)
        _, normal, _ = run(common, capsys)
    assert quiet.count("=== Contract") == 2 and quiet.count("Oxy score") == 2
    for detail in ("Scenario  Status", "× ", "Latency:"):
        assert detail in normal and detail not in quiet


# --- --case (finding 7) ---------------------------------------------------------------

TRICKY = """\
cases:
  - {name: same, prompt: "a", expected: "x"}
  - {name: same, prompt: "b", expected: "x"}
  - {name: "0", prompt: "c", expected: "x"}
  - {prompt: "d", expected: "x"}
"""


def test_case_takes_scenario_ids_and_refuses_a_value_naming_two_cases() -> None:
    meta = parse_contract_text(TRICKY, ROOT / "t.test.yml", ROOT).oxy
    assert meta is not None
    assert [case.scenario_id for case in meta.cases] == ["same", "same-1", "0", "case-3"]
    assert [case.index for case in case_matches(meta, "case-3")] == [3]  # the documented id of an unnamed case
    assert [case.index for case in case_matches(meta, "same-1")] == [1]
    assert [case.index for case in case_matches(meta, "same")] == [0, 1]  # a repeated name: ambiguous
    assert [case.index for case in case_matches(meta, "0")] == [0, 2]  # index 0, and the case named "0"
    assert [case.index for case in case_matches(meta, "2")] == [2]


def test_case_refuses_ambiguity_and_repeated_case_runs_every_case_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "t.test.yml", TRICKY)
    with FakeAgent(oxy_agent()) as agent, serve(oxy_judge) as judge:
        url = agent.url
        common = ["t.test.yml", "--endpoint", url, "--judge-endpoint", judge, "--judge-model", "m", "--runs", "1"]
        code, _, err = run([*common, "--case", "same"], capsys)
        assert code == 2 and agent.requests == []
        assert "--case 'same' names 2 cases of t.test.yml: index 0 (scenario id same); index 1 (scenario id same-1)" in err
        code, out, _ = run([*common, "--case", "2", "--case", "case-3", "--case", "d", "--format", "json"], capsys)
    assert [s["id"] for s in json.loads(out)["scenarios"]] == ["0", "case-3"]
    assert sorted(r["messages"][-1]["content"] for r in agent.bodies) == ["c", "d"]


# --- messages (finding 8) -------------------------------------------------------------


def test_an_oxy_yaml_syntax_error_reads_as_every_other_problem_with_its_line() -> None:
    with pytest.raises(ContractError) as caught:
        parse_contract_text('cases:\n  - prompt: "x\n', ROOT / "c.test.yml", ROOT)
    assert caught.value.message.startswith("Invalid contract YAML: while scanning a quoted scalar\n")  # skylos's words
    assert caught.value.details() == [
        "(document) (line 2): Invalid contract YAML: while scanning a quoted scalar (column 13); "
        "found unexpected end of stream (line 3, column 1)"
    ]


def test_an_oxy_run_without_a_floor_does_not_call_a_zero_score_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "t.test.yml", textwrap.dedent("cases:\n  - {prompt: nobody knows, expected: Tim Cook}\n"))
    with serve(oxy_agent()) as url, serve(oxy_judge) as judge:
        for quiet in ([], ["--quiet"]):
            code, out, _ = run(["t.test.yml", "--endpoint", url, "--judge-endpoint", judge, "--judge-model", "m", *quiet], capsys)
            assert code == 0  # as oxy test without --min-accuracy
            assert out.splitlines()[0] == "Agent behavior test: no floor set: score 0.0% (--min-pass-rate sets one)"
