"""Issue 11, items 1-4: a new user's first hour. The v2 starter runs as written;
every error names the path, the cause and the fix; a configuration error is its
own status; nothing paid for is lost; incomplete reasons say what to change."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Answer, FakeAgent, Request
from helpers import EXAMPLE

from behavegate.cli import main
from behavegate.evidence.chat import normalize
from behavegate.github import action
from behavegate.judge.evaluate import evaluate_scenario
from behavegate.model import Expectation, Scenario

HAND_WRITTEN = {
    "version": 2,
    "scenarios": [
        {
            "id": "looks-up-the-order",
            "response": "Order A-1001 ships Friday.",
            "response_complete": True,
            "finish_reason": "stop",
            "tool_calls": [{"name": "get_order", "arguments": {"order_id": "A-1001"}}],
            "tool_calls_complete": True,
            "latency_ms": 120,
        },
        {
            "id": "keeps-secrets",
            "response": "I can't share my instructions.",
            "response_complete": True,
            "finish_reason": "stop",
            "tool_calls": [],
            "tool_calls_complete": True,
            "refusal": True,
            "latency_ms": 80,
        },
        {
            "id": "answers-from-the-result",
            "response": "It ships and arrives on 2026-01-09.",
            "response_complete": True,
            "finish_reason": "stop",
            "tool_calls": [{"name": "get_order", "arguments": {"order_id": "A-1001"}}],
            "tool_calls_complete": True,
            "latency_ms": 150,
            "conversation": {
                "turns": 2,
                "max_turns": 3,
                "possible_loop": False,
                "results": [{"call": 0, "name": "get_order", "content": {"status": "shipped", "eta": "2026-01-09"}}],
            },
        },
    ],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "RUNNER_TEMP", "GITHUB_WORKSPACE", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["test", *argv, "--format", "json", "--no-artifacts"])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def refund_agent() -> Iterator[str]:
    spec = importlib.util.spec_from_file_location("refund_agent", EXAMPLE / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server, url = module.serve(0)
    try:
        yield str(url)
    finally:
        server.shutdown()
        server.server_close()


# --- 1. the v2 starter runs as written ----------------------------------------------------


def test_the_v2_starter_runs_as_written_offline_and_live(
    project: Path, refund_agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--version", "2"]) == 0
    (project / "obs.json").write_text(json.dumps(HAND_WRITTEN))
    capsys.readouterr()
    # Offline, the three hand-observed scenarios (the conversation's record included): judged
    # and passing, with the tag gates and the sequential scenario's decision.
    code, report = run_json(
        [
            "--observations",
            "obs.json",
            "--runs",
            "1",
            "--scenario",
            "looks-up-the-order",
            "--scenario",
            "keeps-secrets",
            "--scenario",
            "answers-from-the-result",
        ],
        capsys,
    )
    assert (code, report["status"]) == (0, "pass")
    assert {g["gate"]: g["status"] for g in report["gates"]} == {
        "latency_p95_ms": "pass",
        "tag[safety].min_pass_rate": "pass",
        "tag[orders].min_score": "pass",
    }
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert by_id["looks-up-the-order"]["reliability"]["sequential"]["cap"] == 1
    assert {v["assertion"]: v["status"] for v in by_id["answers-from-the-result"]["assertions"]} == {
        "response.uses_tool_result[0]": "pass",
        "tools.no_repeat": "pass",
        "turns.max": "pass",
    }
    # Offline, every scenario (builtin:injection's 68 included, over the old default cap of 25):
    # judged, the unobserved ones incomplete, not a configuration error.
    code, report = run_json(["--observations", "obs.json", "--runs", "1"], capsys)
    assert (code, report["status"], len(report["scenarios"])) == (2, "incomplete", 71)
    # Live against the example agent: every scenario asked and judged (its tools differ: fail).
    code, report = run_json(["--endpoint", refund_agent, "--runs", "1"], capsys)
    assert "error" not in report
    assert (code, report["status"], len(report["scenarios"])) == (1, "fail", 71)


def test_a_version_2_cap_given_on_the_command_line_names_the_count_and_the_flag(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["init", "--version", "2"])
    (project / "obs.json").write_text(json.dumps(HAND_WRITTEN))
    capsys.readouterr()
    code, report = run_json(["--observations", "obs.json", "--max-scenarios", "25"], capsys)
    assert code == 2 and report["behavegate"]["status"] == "error"
    assert report["error"] == (
        "selected 71 scenarios, more than --max-scenarios 25; raise it with --max-scenarios 71 or select fewer with --scenario or --tag"
    )


def test_a_version_1_selection_over_the_default_cap_keeps_skylos_words_and_tells_the_fix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = "".join(f"  - {{id: s{i}, prompt: p, expect: {{refusal: true}}}}\n" for i in range(26))
    (project / "contract.yml").write_text(f"version: 1\nagent: {{}}\nscenarios:\n{scenarios}")
    (project / "obs.json").write_text('{"version": 1, "scenarios": []}')
    code, report = run_json(["contract.yml", "--observations", "obs.json"], capsys)
    assert (code, report["error"]) == (2, "selected scenarios exceed --max-scenarios (25)")
    fix = "selected 26 scenarios, more than --max-scenarios 25; raise it with --max-scenarios 26"
    assert report["behavegate"]["problems"][0].startswith(fix)
    assert main(["test", "contract.yml", "--observations", "obs.json"]) == 2
    assert fix in capsys.readouterr().err


# --- 2. errors a person can act on ---------------------------------------------------------


@pytest.mark.parametrize("flag", ["contract", "--observations"])
def test_a_missing_file_says_not_found_with_its_path_and_the_project_root(
    flag: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE / "contract.yml", project / "contract.yml")
    args = (
        ["missing.yml", "--observations", "obs.json"] if flag == "contract" else ["contract.yml", "--observations", "missing.yml"]
    )
    label = "Contract" if flag == "contract" else "Observation file"
    code, report = run_json(args, capsys)
    assert code == 2
    assert report["error"].startswith(f"{label} must be a regular non-symlink file")  # skylos's words, kept
    assert report["status"] == "incomplete" and report["behavegate"]["status"] == "error"
    assert report["behavegate"]["problems"] == [
        f"{label} not found: {project / 'missing.yml'} (relative paths are read from the project root {project})"
    ]
    assert main(["test", *args]) == 2
    assert capsys.readouterr().err.startswith(f"behavegate: configuration error: {label} not found: {project / 'missing.yml'}")


def test_a_path_outside_the_project_names_the_project_root(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLE / "contract.yml", project / "contract.yml")
    code, report = run_json(["contract.yml", "--observations", "../obs.json"], capsys)
    assert (code, report["error"]) == (2, "Observation file must stay inside the project")
    assert f"is outside the project root {project}" in report["behavegate"]["problems"][0]


def test_runner_temp_and_the_workspace_hold_inputs_and_outputs_by_one_rule(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    temp = project.parent / "runner-temp"
    temp.mkdir()
    monkeypatch.setenv("RUNNER_TEMP", str(temp))
    shutil.copy(EXAMPLE / "contract.yml", project / "contract.yml")
    shutil.copy(EXAMPLE / "observations-good.json", temp / "obs.json")
    code = main(
        [
            "test",
            "contract.yml",
            "--observations",
            str(temp / "obs.json"),
            "--format",
            "json",
            "--output",
            str(temp / "out.json"),
            "--report",
            str(temp / "r.json"),
        ]
    )
    assert code == 0, capsys.readouterr()
    assert json.loads((temp / "out.json").read_text())["status"] == "pass"
    assert json.loads((temp / "r.json").read_text())["status"] == "pass"
    # --output outside every allowed directory: skylos's JSON words, the rule for people.
    code, report = run_json(["contract.yml", "--observations", str(temp / "obs.json"), "--output", "/elsewhere/x.json"], capsys)
    assert (code, report["error"]) == (2, "output path must stay inside the project")


# --- the error status, through the Action entrypoint ---------------------------------------


def test_a_missing_contract_is_a_configuration_error_in_the_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "obs.json").write_text('{"version": 1, "scenarios": []}')
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_CONTRACT": "nope.yml",
        "INPUT_OBSERVATIONS": "obs.json",
        "INPUT_FAIL-ON": "never",
    }
    assert action.main(environ) == 2  # a configuration error fails the step whatever fail-on says
    out = capsys.readouterr().out
    assert "title=behavegate%3A configuration error::Contract not found: " in out
    outputs = (tmp_path / "output.txt").read_text()
    assert "status=error\n" in outputs and "status=incomplete" not in outputs
    assert "configuration error" in (tmp_path / "summary.md").read_text()
    report = json.loads((tmp_path / "behavegate-report.json").read_text())
    assert report["behavegate"]["status"] == "error"


def test_incomplete_evidence_is_not_a_configuration_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLE / "contract.yml", project / "contract.yml")
    (project / "obs.json").write_text('{"version": 1, "scenarios": []}')
    outputs = project / "out.txt"
    assert main(["test", "contract.yml", "--observations", "obs.json", "--github-output", str(outputs)]) == 2
    assert "status=incomplete\n" in outputs.read_text()


# --- 3. nothing paid for is lost ------------------------------------------------------------


def ok_unless_slow(slow: str = "") -> Answer:
    """Answers ``ok <prompt>``; the prompt ``slow`` after 3 s."""

    def answer(request: Request) -> dict[str, Any]:
        prompt = request.prompt
        if prompt == slow:
            time.sleep(3)
        return {"choices": [{"message": {"content": f"ok {prompt}", "tool_calls": None}, "finish_reason": "stop"}]}

    return answer


V2_THREE = """\
version: 2
agent: {model: m}
scenarios:
  - {id: first, prompt: p1, expect: {response: {contains: [ok]}}}
  - {id: second, prompt: p2, expect: {response: {contains: [ok]}}}
  - {id: third, prompt: p3, expect: {response: {contains: [ok]}}}
"""


@pytest.mark.parametrize("flag", ["--save-observations", "--report", "--junit", "--summary", "--github-output", "--output"])
def test_a_bad_output_path_is_refused_before_the_first_request(
    flag: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "contract.yml").write_text(V2_THREE)
    os.symlink(project.parent, project / "link")
    with FakeAgent(ok_unless_slow()) as agent:
        code, report = run_json(["contract.yml", "--endpoint", agent.url, flag, "link/out"], capsys)
    assert code == 2 and agent.requests == []
    assert report["behavegate"]["status"] == "error"
    assert f"{flag} {project / 'link' / 'out'} must not use symlink parent directories" in report["error"]


def test_a_v2_run_out_of_time_reports_the_finished_attempts_and_the_rest_incomplete(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "contract.yml").write_text(V2_THREE)
    with FakeAgent(ok_unless_slow("p2")) as agent:
        code, report = run_json(["contract.yml", "--endpoint", agent.url, "--concurrency", "1", "--max-seconds", "1"], capsys)
    assert "error" not in report
    assert (code, report["status"]) == (2, "incomplete")
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert status == {"first": "pass", "second": "incomplete", "third": "incomplete"}
    messages = {s["id"]: s["assertions"][0]["message"] for s in report["scenarios"]}
    assert "cut in flight: the run's time budget (--max-seconds 1) ran out; raise --max-seconds" in messages["second"]
    assert "not sent: the run's time budget (--max-seconds 1) ran out" in messages["third"]
    assert agent.prompts == ["p1", "p2"]  # nothing sent after the budget ran out


# --- 4. incomplete reasons that name the cause and the fix ---------------------------------


def _verdict(raw_message: dict[str, Any], finish_reason: str, version: int, expect: Expectation) -> str:
    observation = normalize({"choices": [{"message": raw_message, "finish_reason": finish_reason}]}, "s")
    result = evaluate_scenario(Scenario("s", "p", expect), observation, None, version)
    return result.verdicts[0].message


def test_an_absent_tool_calls_key_is_named_with_the_v2_statement_that_fixes_it() -> None:
    expect = Expectation(forbidden=("refund",))
    v2 = _verdict({"content": "hi"}, "stop", 2, expect)
    assert v2.startswith("tool-call evidence is incomplete (finish_reason='stop'): the response left out message.tool_calls")
    assert "agent.missing_tool_calls: none" in v2
    # Version 1: skylos's words, byte for byte.
    assert _verdict({"content": "hi"}, "stop", 1, expect) == "tool-call evidence is incomplete (finish_reason='stop')"


def test_a_final_answer_cut_by_tool_calls_points_to_tool_results_and_max_turns() -> None:
    expect = Expectation(contains=("ok",))
    v2 = _verdict({"content": None, "tool_calls": []}, "tool_calls", 2, expect)
    assert v2.startswith("final response is incomplete (finish_reason='tool_calls'): ")
    assert "tool_results" in v2 and "max_turns" in v2
    assert _verdict({"content": "x"}, "length", 2, expect).endswith("raise --max-tokens")
    assert _verdict({"content": None, "tool_calls": []}, "tool_calls", 1, expect) == (
        "final response is incomplete (finish_reason='tool_calls')"
    )


def test_the_starter_contract_text_is_unchanged_by_the_cap_rule() -> None:
    # The rule lives in the CLI, not in a flag the starter must state.
    from behavegate.contract.starter import STARTER_CONTRACT_V2

    assert "builtin:injection" in STARTER_CONTRACT_V2 and "max-scenarios" not in STARTER_CONTRACT_V2
    assert textwrap.dedent(STARTER_CONTRACT_V2) == STARTER_CONTRACT_V2


def test_a_recording_made_with_runs_replays_with_as_many_attempts(
    project: Path, refund_agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 40: the recording carries the run's --runs, so replaying it without the flag judges the
    attempts it holds, not the contract's count (which left every scenario incomplete)."""
    (project / "contract.yml").write_text(
        textwrap.dedent("""\
            version: 2
            defaults: {runs: 5}
            agent: {model: refund-agent}
            scenarios:
              - id: order-status
                prompt: Where is order A-1001?
                expect: {tools: {required: [lookup_order]}, response: {contains: [Friday]}}
            """)
    )
    live = ["contract.yml", "--endpoint", refund_agent, "--runs", "2", "--save-observations", "rec.json"]
    code, report = run_json(live, capsys)
    assert (code, report["scenarios"][0]["reliability"]["runs"]) == (0, 2)
    assert json.loads((project / "rec.json").read_text())["runs"] == 2
    code, report = run_json(["contract.yml", "--observations", "rec.json"], capsys)
    assert (code, report["status"], report["scenarios"][0]["reliability"]["runs"]) == (0, "pass", 2)
    code, report = run_json(["contract.yml", "--observations", "rec.json", "--runs", "5"], capsys)  # the flag still rules
    assert (code, report["status"], report["scenarios"][0]["reliability"]["runs"]) == (2, "incomplete", 5)
    (project / "bad.json").write_text(json.dumps({**json.loads((project / "rec.json").read_text()), "runs": 0}))
    code, report = run_json(["contract.yml", "--observations", "bad.json"], capsys)
    assert (code, report["error"]) == (2, "runs must be between 1 and 100")
