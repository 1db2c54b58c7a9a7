"""Oxy test files (``*.test.yml``) read as they are: the reader, Oxy's score and
consistency, its floor, ``--case``, discovery, and the documented example run live."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import Golden
from fake_agent import FakeAgent, Request, serve
from helpers import ROOT, copy_example, oxy_agent, oxy_judge

from behavegate.cli import main
from behavegate.contract.load import parse_contract_text
from behavegate.contract.oxy import case_index
from behavegate.errors import ContractError
from behavegate.judge.oxy_score import file_score, floor_gate, score_gates
from behavegate.model import Attempt, Expectation, Reliability, Scenario, ScenarioResult, Status

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "oxy" / "sales.agentic.test.yml"


def load(text: str, name: str = "sales.agentic.test.yml") -> Any:
    return parse_contract_text(textwrap.dedent(text), ROOT / name, ROOT)


def problems(text: str) -> list[str]:
    with pytest.raises(ContractError) as caught:
        load(text)
    return [problem.located() for problem in caught.value.problems]


# --- the reader -------------------------------------------------------------------


def test_the_documented_example_reads_as_a_version_2_contract_with_its_lines(golden: Golden) -> None:
    contract = parse_contract_text(EXAMPLE.read_text(), EXAMPLE, EXAMPLE.parent)
    assert contract.version == 2 and contract.oxy is not None
    assert contract.judge.model == "gpt-5-mini-2025-08-07"
    shown = {
        "oxy": {
            "target": contract.oxy.target,
            "runs": contract.oxy.runs,
            "concurrency": contract.oxy.concurrency,
            "judge_model": contract.oxy.judge_model,
            "cases": [[c.index, c.name, c.prompt, c.scenario_id] for c in contract.oxy.cases],
        },
        "gates": {"formula": contract.gates.formula, "min_pass_rate": contract.gates.min_pass_rate},
        "scenarios": [
            {
                "id": s.id,
                "prompt": s.prompt,
                "line": s.line,
                "runs": s.runs,
                "tags": list(s.tags),
                "judge": None if s.expect.judge is None else s.expect.judge.expected,
                "required_tools": [call.name for call in s.expect.required],
                "assertion_lines": dict(s.assertion_lines),
            }
            for s in contract.scenarios
        ],
    }
    golden.check("oxy/example_contract.json", json.dumps(shown, indent=2) + "\n")


def test_settings_default_as_oxy_defaults_them_and_unnamed_cases_get_their_index() -> None:
    contract = load("""\
        cases:
          - prompt: "Who is the CEO of Apple?"
            expected: "Tim Cook"
          - name: "Revenue by region, Q4!"
            prompt: "Revenue?"
            expected: "up"
        """)
    assert (contract.oxy.runs, contract.oxy.concurrency, contract.oxy.judge_model) == (3, 5, None)
    assert [s.id for s in contract.scenarios] == ["case-0", "Revenue-by-region-Q4"]
    assert [s.runs for s in contract.scenarios] == [3, 3]


def test_every_problem_names_the_oxy_key_and_its_line(golden: Golden) -> None:
    found = problems("""\
        target: x.agentic.yml
        settings:
          runs: 0
          concurency: 2
          judge_model: 5
        cases:
          - prompt: "hi"
            expectd: "x"
          - prompt: 12
            expected: "ok"
            tags: ["a b"]
            tool: "exec sql"
          - "just text"
        extra: 1
        """)
    golden.check("oxy/reader_errors.txt", "\n".join(found) + "\n")


def test_an_empty_case_list_and_a_missing_one_are_refused() -> None:
    assert problems("cases: []\n") == ["cases (line 1): must be a non-empty list of {prompt, expected}"]
    assert problems("target: a.yml\n") == ["cases (line 1): is required: a list of {prompt, expected}"]


def test_a_file_named_test_yml_is_oxy_even_with_a_version_key() -> None:
    assert any("Unknown Oxy test file key: version" in p for p in problems("version: 2\ncases: []\n"))


# --- --case ------------------------------------------------------------------------


def test_case_selects_by_index_then_name_then_exact_prompt() -> None:
    meta = parse_contract_text(EXAMPLE.read_text(), EXAMPLE, EXAMPLE.parent).oxy
    assert meta is not None
    assert case_index(meta, "2").scenario_id == "apple-ceo"  # type: ignore[union-attr]
    assert case_index(meta, "q4-revenue-trend").index == 1  # type: ignore[union-attr]
    assert case_index(meta, "Who is the CEO of Apple?").index == 2  # type: ignore[union-attr]
    assert case_index(meta, "4") is None and case_index(meta, "who is the ceo of apple?") is None


# --- score, consistency, floor -----------------------------------------------------


def result(scenario_id: str, statuses: list[Status]) -> ScenarioResult:
    attempts = tuple(Attempt(i, status, (), None) for i, status in enumerate(statuses))
    passed, failed = statuses.count("pass"), statuses.count("fail")
    rel = Reliability(
        len(statuses), passed, failed, len(statuses) - passed - failed, 1.0, "rate", passed / len(statuses), (0, 1), False
    )
    return ScenarioResult(Scenario(scenario_id, "p", Expectation()), "pass", (), None, attempts, rel)


def test_cases_at_8_of_8_and_0_of_2_score_80_percent_as_oxy_scores_them() -> None:
    scored = file_score([result("a", ["pass"] * 8), result("b", ["fail"] * 2)])
    assert scored.score == pytest.approx(0.8)
    assert scored.consistency == 1.0  # both cases' runs agreed
    assert [c.label for c in scored.cases] == ["PASS", "FAIL"]
    (gate,) = score_gates([result("a", ["pass"] * 8), result("b", ["fail"] * 2)], 0.8)
    assert (gate.gate, gate.status) == ("min_pass_rate", "pass")
    (gate,) = score_gates([result("a", ["pass"] * 8), result("b", ["fail"] * 2)], 0.81)
    assert gate.status == "fail" and "observed 80.0%" in gate.message


def test_files_at_100_and_0_percent_average_50_percent() -> None:
    files = [file_score([result("a", ["pass"] * 2), result("b", ["pass"])]), file_score([result("c", ["fail"] * 3)])]
    assert floor_gate("min_pass_rate[oxy files]", files, 0.5).status == "pass"
    assert floor_gate("min_pass_rate[oxy files]", files, 0.51).status == "fail"


def test_consistency_counts_cases_whose_runs_all_agreed_and_a_flaky_case_is_flky() -> None:
    scored = file_score([result("a", ["pass", "fail", "pass"]), result("b", ["pass"] * 3)])
    assert scored.consistency == 0.5 and [c.label for c in scored.cases] == ["FLKY", "PASS"]


def test_without_a_floor_a_failing_case_does_not_fail_the_file_but_an_unjudged_run_is_incomplete() -> None:
    (gate,) = score_gates([result("a", ["fail"] * 3)], None)
    assert (gate.gate, gate.status) == ("score", "pass")
    (gate,) = score_gates([result("a", ["pass", "incomplete"])], None)
    assert gate.status == "incomplete"


def test_an_unjudged_run_leaves_the_floor_undecided_only_when_it_could_change_the_side() -> None:
    assert score_gates([result("a", ["pass", "pass", "incomplete"])], 0.6)[0].status == "pass"
    assert score_gates([result("a", ["pass", "fail", "incomplete"])], 0.6)[0].status == "incomplete"
    assert score_gates([result("a", ["fail", "fail", "incomplete"])], 0.6)[0].status == "fail"


# --- the command -------------------------------------------------------------------

ERRORS: list[str] = []


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["test", *args, "--no-artifacts"])
    captured = capsys.readouterr()
    ERRORS.append(captured.err)
    return code, captured.out


def test_case_runs_one_case_and_names_what_it_cannot_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    with FakeAgent(oxy_agent()) as agent, serve(oxy_judge) as judge:
        url = agent.url
        _, out = run(
            [
                "sales.agentic.test.yml",
                "--endpoint",
                url,
                "--judge-endpoint",
                judge,
                "--case",
                "apple-ceo",
                "--runs",
                "2",
                "--format",
                "json",
            ],
            capsys,
        )
        assert [s["id"] for s in json.loads(out)["scenarios"]] == ["apple-ceo"]
        assert len(agent.requests) == 2  # --runs overrides settings.runs
        code, _ = run(["sales.agentic.test.yml", "--endpoint", url, "--case", "9"], capsys)
    assert code == 2 and len(agent.requests) == 2
    assert "no case with that 0-based index, name, prompt or scenario id" in ERRORS[-1]


def test_quiet_and_verbose_tables_keep_untrusted_text_inert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    with serve(oxy_agent()) as url, serve(oxy_judge) as judge:
        common = ["sales.agentic.test.yml", "--endpoint", url, "--judge-endpoint", judge, "--runs", "1"]
        _, quiet = run([*common, "--quiet"], capsys)
        _, verbose = run([*common, "--verbose"], capsys)
    assert "Oxy score" in quiet and "agent output:" not in quiet and "apple-ceo" in quiet
    # --verbose: the runs that did not pass, with the agent's answer (Oxy shows failures only).
    assert "agent output:" in verbose and "Here are customers." in verbose and "agent output:" not in quiet
    assert all(not line.lstrip().startswith(("::", "##[")) for line in verbose.splitlines())


def test_no_path_runs_every_discovered_test_file_each_its_own_testsuite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "ceo.test.yml").write_text(
        'settings: {runs: 1}\ncases:\n  - {prompt: "Who is the CEO of Apple?", expected: "Tim Cook"}\n'
    )
    with serve(oxy_agent()) as url, serve(oxy_judge) as judge:
        _, out = run(
            [
                "--endpoint",
                url,
                "--judge-endpoint",
                judge,
                "--judge-model",
                "m",
                "--runs",
                "1",
                "--format",
                "json",
                "--junit",
                "junit.xml",
            ],
            capsys,
        )
    suite = json.loads(out)
    assert [c["contract_path"] for c in (r["behavegate"] for r in suite["contracts"])] == [
        "more/ceo.test.yml",
        "sales.agentic.test.yml",
    ]
    junit = (tmp_path / "junit.xml").read_text()
    assert junit.count("<testsuite ") == 2 and "behavegate.oxy.score" in junit


def test_case_needs_one_oxy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    (tmp_path / "b.test.yml").write_text('cases:\n  - {prompt: "p", expected: "e"}\n')
    code, _ = run(["--case", "0", "--endpoint", "http://127.0.0.1:9/v1/chat/completions"], capsys)
    assert code == 2 and "--case takes one contract" in ERRORS[-1]


# --- judged end to end: a loopback agent and a scripted loopback judge ---------------


@pytest.mark.parametrize(("floor", "code"), [(None, 0), ("0.6", 0), ("0.7", 1)])
def test_the_documented_example_judged_gives_oxy_pass_rates_score_consistency_and_exit_code(
    floor: str | None, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    extra = ["--min-pass-rate", floor] if floor else []
    with serve(oxy_agent(flaky=True)) as agent, FakeAgent(oxy_judge) as judge:
        args = ["sales.agentic.test.yml", "--endpoint", agent, "--judge-endpoint", judge.url, "--format", "json", *extra]
        exit_code, out = run([*args, "--junit", "junit.xml"], capsys)
    assert exit_code == code, ERRORS[-1]
    assert len(judge.requests) == 12
    assert {q["model"] for q in judge.bodies} == {"gpt-5-mini-2025-08-07"}  # settings.judge_model
    oxy = json.loads(out)["behavegate"]["oxy"]
    assert [(c["name"], c["passed"], c["runs"], c["verdict"]) for c in oxy["cases_detail"]] == [
        ("user-signups-last-month", 2, 3, "FLKY"),
        ("q4-revenue-trend", 3, 3, "PASS"),
        ("apple-ceo", 3, 3, "PASS"),
        ("top-customers-by-ltv", 0, 3, "FAIL"),
    ]
    assert (oxy["score"], oxy["consistency"]) == (round(8 / 12, 6), 0.75)
    # `tool:` is Oxy's "assert that this tool was invoked": the last case never calls execute_sql.
    last = json.loads(out)["scenarios"][3]["attempts"]
    assert all(any(v["assertion"] == "tools.required[0]" and v["status"] == "fail" for v in a["assertions"]) for a in last)
    junit = (tmp_path / "junit.xml").read_text()
    assert 'name="behavegate.oxy.score" value="0.666667"' in junit and 'value="0.750000"' in junit


def test_a_judged_table_shows_oxy_verdicts_and_escaped_judge_reasoning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    with serve(oxy_agent(flaky=True)) as agent, serve(oxy_judge) as judge:
        _, table = run(["sales.agentic.test.yml", "--endpoint", agent, "--judge-endpoint", judge, "--verbose"], capsys)
    assert "FLKY user-signups-last-month (2/3)" in table and "FAIL top-customers-by-ltv    (0/3)" in table
    assert "Oxy score 66.7% (8/12 runs passed) · consistency 75.0% (3/4 cases)" in table
    assert "judge reasoning: scripted fail ::warning::x" in table
    assert all(not line.lstrip().startswith(("::", "##[")) for line in table.splitlines())


def test_files_at_100_and_0_percent_meet_a_50_percent_floor_across_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.test.yml").write_text(
        'settings: {runs: 1}\ncases:\n  - {prompt: "Who is the CEO of Apple?", expected: "Tim Cook"}\n'
        '  - {prompt: "What\'s the revenue trend for Q4?", expected: "up 15%"}\n'
    )
    (tmp_path / "bad.test.yml").write_text('settings: {runs: 1}\ncases:\n  - {prompt: "Unknown?", expected: "x"}\n')
    with serve(oxy_agent()) as agent, serve(oxy_judge) as judge:
        base = ["--endpoint", agent, "--judge-endpoint", judge, "--judge-model", "m", "--format", "json"]
        passed, out = run([*base, "--min-pass-rate", "0.5"], capsys)
        gate = json.loads(out)["gates"][0]
        failed, _ = run([*base, "--min-pass-rate", "0.5", "--threshold-mode", "all"], capsys)
    assert (passed, gate["gate"], gate["observed"]["scores"]) == (0, "min_pass_rate[oxy files]", [0.0, 1.0])
    assert failed == 1  # `all`: each file must reach the floor


def recorded_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, list[Request]]:
    """The documented example run live against the flaky agent and the scripted judge,
    its evidence saved to obs.json: (exit code, JSON report, the questions the judge got)."""
    monkeypatch.chdir(tmp_path)
    copy_example(tmp_path)
    with serve(oxy_agent(flaky=True)) as agent, FakeAgent(oxy_judge) as judge:
        args = ["--endpoint", agent, "--judge-endpoint", judge.url, "--save-observations", "obs.json"]
        return (*run(["sales.agentic.test.yml", *args, "--format", "json"], capsys), judge.requests)


def test_a_judged_oxy_run_replays_offline_to_the_same_numbers_without_a_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    live_code, live, questions = recorded_live(tmp_path, monkeypatch, capsys)
    asked = len(questions)
    replay_code, replayed = run(["sales.agentic.test.yml", "--observations", "obs.json", "--format", "json"], capsys)
    assert len(questions) == asked == 12  # the replay asked nobody
    assert (live_code, json.loads(live)["behavegate"]["oxy"]) == (replay_code, json.loads(replayed)["behavegate"]["oxy"])


def test_a_judged_oxy_run_sharded_and_merged_gives_the_unsharded_numbers_and_a_missing_shard_is_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    whole_code, whole, _ = recorded_live(tmp_path, monkeypatch, capsys)
    replay = ["sales.agentic.test.yml", "--observations", "obs.json"]
    for index in (1, 2, 3):
        code, _ = run([*replay, "--shard", f"{index}/3", "--report", f"shards/{index}.json"], capsys)
        assert code == 0, ERRORS[-1]
    merged_code = main(["merge", "shards", "--no-artifacts", "--format", "json"])
    merged = json.loads(capsys.readouterr().out)
    assert (merged_code, merged["status"]) == (whole_code, json.loads(whole)["status"])
    assert merged["behavegate"]["oxy"] == json.loads(whole)["behavegate"]["oxy"]
    assert merged["scenarios"] == json.loads(whole)["scenarios"]
    (tmp_path / "shards" / "2.json").unlink()
    missing_code = main(["merge", "shards", "--no-artifacts", "--format", "json"])
    missing = json.loads(capsys.readouterr().out)
    assert (missing_code, missing["status"]) == (2, "incomplete")
