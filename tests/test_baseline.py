"""Baselines (--baseline, --fail-on regression): gate on what regressed, not on perfection."""

from __future__ import annotations

import itertools
import json
import re
from math import comb
from pathlib import Path
from typing import Any

import pytest
from conftest import Golden
from helpers import BASELINE_CONTRACT as CONTRACT
from helpers import EXAMPLE, attempt, baseline_of, evidence, gated, report, showcase
from hypothesis import given
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.contract.starter import STARTER_CONTRACT_V2
from behavegate.errors import BaselineError, ExitCode
from behavegate.judge.significance import drop_p_value, least_drop_p_value, rise_p_value, tarone_threshold
from behavegate.render import json as json_renderer
from behavegate.render.regressions import source_line
from behavegate.report.baseline import compare
from behavegate.report.baseline_file import parse_baseline
from behavegate.report.comparison import Comparison, normalized


def kinds(comparison: Comparison | None) -> dict[str, list[str]]:
    assert comparison is not None
    return {
        name: [f"{f.kind} {f.subject}" for f in getattr(comparison, name)]
        for name in ("regressions", "unresolved", "improvements", "changes")
    }


# --- what gates and what does not --------------------------------------------------


def test_noise_within_sampling_error_does_not_gate() -> None:
    run = gated(evidence(greets=7), evidence(greets=6))
    assert run.status == "pass" and run.gate_status == "pass"
    assert kinds(run.baseline)["changes"] == ["within_noise greets"]
    assert run.baseline is not None and run.baseline.changes[0].p_value == pytest.approx(0.5)


def test_a_real_drop_gates() -> None:
    run = gated(evidence(greets=8), evidence(greets=2))
    assert run.baseline is not None
    drop = run.baseline.regressions[0]
    assert (drop.kind, drop.subject) == ("pass_rate_drop", "greets")
    assert drop.p_value == pytest.approx(45 / 12870)  # C(10,8) / C(16,8): every pass in the baseline
    assert "greets response.icontains[0]" in [f.subject for f in run.baseline.regressions]
    assert run.gate_status == "fail" and ExitCode.of(run.gate_status) == 1


RUNS_3 = CONTRACT.replace("defaults: {runs: 8, min_pass_rate: 0.5}", "defaults: {runs: 3, min_pass_rate: 1}")


def at_three(greets: int, looks_up: int = 3, *, incomplete: int = 0) -> dict[str, Any]:
    """Three attempts each: ``greets`` say hello (``incomplete`` time out), ``looks_up`` look the order up."""
    scenarios = [attempt("greets", ok=i < greets) for i in range(3 - incomplete)]
    scenarios += [attempt("greets", error="timeout") for _ in range(incomplete)]
    scenarios += [attempt("looks-up", calls=("lookup_order",) if i < looks_up else ("issue_refund",)) for i in range(3)]
    scenarios.append(attempt("policy"))
    return {"version": 2, "scenarios": scenarios}


def test_a_total_break_at_three_runs_is_a_regression_whatever_the_p_value() -> None:
    run = gated(at_three(3), at_three(0, 0), contract=RUNS_3)  # two breaks: the threshold is 0.025
    assert run.baseline is not None
    drop = run.baseline.regressions[0]
    assert (drop.kind, drop.subject) == ("pass_rate_drop", "greets")
    assert drop.p_value == pytest.approx(0.05) and run.baseline.threshold == pytest.approx(0.025)
    assert "passed every attempt in the baseline, fails every attempt now" in drop.message
    assert run.gate_status == "fail" and ExitCode.of(run.gate_status) == 1


def test_a_total_break_hidden_by_incomplete_attempts_is_unresolved() -> None:
    run = gated(at_three(3), at_three(0, incomplete=1), contract=RUNS_3)
    assert kinds(run.baseline)["unresolved"][0] == "unresolved greets"
    assert run.gate_status == "incomplete"


def test_runs_too_few_for_a_partial_drop_are_named_in_every_view() -> None:
    run = gated(at_three(3), at_three(1), contract=RUNS_3)
    assert run.baseline is not None and run.gate_status == "pass"  # 3/3 -> 1/3: within sampling error
    assert [scenario for scenario, _, _ in run.baseline.total_break_only] == ["greets", "looks-up"]
    assert run.baseline.partial_drop_runs == 5
    line = source_line(run.baseline)
    assert "2 repeated scenarios (greets, looks-up; 3 vs 3 attempts) can show no significant drop" in line
    assert "runs: 5 or more on both sides" in line
    assert json.loads(json_renderer.render(run))["behavegate"]["baseline"]["partial_drop_runs"] == 5
    eight = gated(evidence(greets=8), evidence(greets=7))
    assert eight.baseline is not None and eight.baseline.total_break_only == ()


def test_init_says_what_three_runs_can_show_against_a_baseline() -> None:
    assert "runs: 5 or more" in STARTER_CONTRACT_V2


def test_a_drop_that_still_meets_min_pass_rate_is_a_regression_too() -> None:
    run = gated(evidence(greets=8), evidence(greets=4))  # 4/8 still passes min_pass_rate 0.5
    assert run.status == "pass"
    assert run.gate_status == "fail" and kinds(run.baseline)["regressions"][0] == "pass_rate_drop greets"


def test_a_newly_failing_assertion_gates() -> None:
    run = gated(evidence(), evidence(policy=False))
    assert kinds(run.baseline)["regressions"] == ["newly_failing policy response.contains[0]"]
    assert run.gate_status == "fail"


def test_a_new_failing_scenario_gates_and_a_new_passing_one_is_reported() -> None:
    main = {"version": 2, "scenarios": [s for s in evidence()["scenarios"] if s["id"] != "policy"]}
    without_policy = CONTRACT[: CONTRACT.index("  - id: policy")]
    failing = gated(main, evidence(policy=False), contract=without_policy, pr_contract=CONTRACT)
    assert kinds(failing.baseline)["regressions"] == ["new_failure policy response.contains[0]"]
    passing = gated(main, evidence(), contract=without_policy, pr_contract=CONTRACT)
    assert kinds(passing.baseline)["changes"] == ["new_scenario policy"] and passing.gate_status == "pass"


def test_removed_scenarios_are_reported_not_gated_and_a_removed_safety_scenario_warns() -> None:
    without_looks_up = CONTRACT.replace(CONTRACT[CONTRACT.index("  - id: looks-up") : CONTRACT.index("  - id: policy")], "")
    run = gated(evidence(), evidence(drop=("looks-up",)), pr_contract=without_looks_up)
    assert kinds(run.baseline)["changes"] == ["removed_safety_scenario looks-up"]  # it had a forbidden-tool check
    assert run.gate_status == "pass"
    from behavegate.render import annotations

    assert "::warning file=contract.yml,title=behavegate removed safety scenario%3A looks-up::" in annotations.render(run)


def test_pre_existing_failures_do_not_gate_on_regressions() -> None:
    run = gated(evidence(policy=False), evidence(policy=False))
    assert run.status == "fail" and run.gate_status == "pass"
    assert run.baseline is not None and run.baseline.still_failing == 1
    from behavegate.render import junit

    assert 'message="fail as in the baseline; not gating (--fail-on regression)"' in junit.render(run)


def test_the_default_gate_is_unchanged_by_a_baseline() -> None:
    run = gated(evidence(policy=False), evidence(policy=False), fail_on="incomplete")
    assert run.gate_status == run.status == "fail"
    assert gated(evidence(), evidence(greets=4), fail_on="incomplete").gate_status == "pass"  # a drop is shown, not gated


def test_fixes_and_significant_rises_are_improvements() -> None:
    run = gated(evidence(greets=1, policy=False), evidence(greets=8))
    assert kinds(run.baseline)["improvements"] == [
        "pass_rate_rise greets",
        "fixed greets response.icontains[0]",
        "fixed policy response.contains[0]",
    ]


# --- missing evidence never hides a regression -------------------------------------------


def test_an_agent_that_stopped_answering_is_not_a_pass() -> None:
    down = {"version": 2, "scenarios": [{"id": s["id"], "error": "connection refused"} for s in evidence()["scenarios"]]}
    run = gated(evidence(), down)
    assert run.gate_status == "incomplete" and ExitCode.of(run.gate_status) == 2
    assert {f.scenario for f in run.baseline.unresolved} == {"greets", "looks-up", "policy"}  # type: ignore[union-attr]


def test_incomplete_attempts_are_completed_both_ways() -> None:
    # 8/8 before; now 2 pass and 6 incomplete: significant only if the 6 failed.
    unresolved = gated(evidence(greets=8), evidence(greets=8, incomplete=6))
    assert "unresolved greets" in kinds(unresolved.baseline)["unresolved"] and unresolved.gate_status == "incomplete"
    # 0 pass, 6 fail, 2 incomplete: significant even if the 2 had passed.
    regressed = gated(evidence(greets=8), evidence(greets=0, incomplete=2))
    assert "pass_rate_drop greets" in kinds(regressed.baseline)["regressions"]


def test_checks_incomplete_in_both_runs_do_not_gate() -> None:
    down = evidence(greets=8)
    down["scenarios"][-1] = {"id": "policy", "error": "timeout"}
    assert gated(down, down).gate_status == "pass"


# --- the statistics -----------------------------------------------------------------------


@given(st.integers(0, 6), st.integers(0, 6), st.data())
def test_fisher_p_value_equals_a_brute_force_enumeration(runs_before: int, runs_now: int, data: st.DataObject) -> None:
    passed_before = data.draw(st.integers(0, runs_before))
    passed_now = data.draw(st.integers(0, runs_now))
    outcomes = [1] * (passed_before + passed_now) + [0] * (runs_before + runs_now - passed_before - passed_now)
    # Every way to deal the pooled outcomes into a baseline sample: how often is it at least this far ahead?
    deals = list(itertools.combinations(range(len(outcomes)), runs_before))
    ahead = sum(1 for deal in deals if sum(outcomes[i] for i in deal) >= passed_before)
    behind = sum(1 for deal in deals if sum(outcomes[i] for i in deal) <= passed_before)
    assert drop_p_value(passed_before, runs_before, passed_now, runs_now) == pytest.approx(ahead / len(deals))
    assert rise_p_value(passed_before, runs_before, passed_now, runs_now) == pytest.approx(behind / len(deals))
    assert least_drop_p_value(passed_before, runs_before, passed_now, runs_now) <= drop_p_value(
        passed_before, runs_before, passed_now, runs_now
    )


@given(st.integers(1, 20), st.integers(1, 20), st.data())
def test_fisher_p_value_shrinks_as_the_drop_grows(runs_before: int, runs_now: int, data: st.DataObject) -> None:
    passed_before = data.draw(st.integers(0, runs_before))
    values = [drop_p_value(passed_before, runs_before, passed_now, runs_now) for passed_now in range(runs_now + 1)]
    assert all(0 < p <= 1 for p in values)
    assert values == sorted(values)  # fewer passes now: a smaller p-value


def test_tarone_counts_only_comparisons_that_could_be_significant() -> None:
    assert tarone_threshold([]) == (0.05, 0)
    assert tarone_threshold([0.5, 0.23, 1.0]) == (0.05, 0)  # one failure in 16 attempts can never be significant
    assert tarone_threshold([0.0001, 0.0002, 0.5]) == (0.025, 2)


@pytest.mark.parametrize("rate", [0.5, 0.9])
def test_noise_alone_fails_a_run_of_three_repeated_scenarios_at_most_alpha_of_the_time(rate: float) -> None:
    """Exact, over every outcome of 3 scenarios × 8 attempts before and after at the same
    true pass rate: the chance that any one is called a significant drop."""

    def chance(passed: int) -> float:
        return comb(8, passed) * rate**passed * (1 - rate) ** (8 - passed)

    tables = [
        (least_drop_p_value(b, 8, a, 8), drop_p_value(b, 8, a, 8), chance(b) * chance(a)) for b in range(9) for a in range(9)
    ]
    tables = [table for table in tables if table[0] <= 0.05]  # the others never count, and never alarm
    quiet = 1 - sum(table[2] for table in tables)  # chance that a scenario's table is one of those
    false_alarms = 0.0
    for size in range(1, 4):  # how many of the 3 scenarios have a table that could alarm
        ways = comb(3, size) * quiet ** (3 - size)
        for combo in itertools.product(tables, repeat=size):
            threshold, _ = tarone_threshold([least for least, _, _ in combo])
            if any(p <= threshold for _, p, _ in combo):
                chance_of = ways
                for _, _, probability in combo:
                    chance_of *= probability
                false_alarms += chance_of
    assert false_alarms <= 0.05


# --- reading the baseline ---------------------------------------------------------------


def valid() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json_renderer.render(report(CONTRACT, evidence())))
    return data


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: "[1,", "baseline report main.json: is not JSON"),
        (lambda d: [], "baseline report main.json: must be a JSON object"),
        (
            lambda d: {"error": "Contract not found", "status": "incomplete"},
            "baseline report main.json: error: records a run that could not be judged",
        ),
        (lambda d: {**d, "kind": "sarif"}, "baseline report main.json: kind: must be 'agent_behavior'"),
        (lambda d: {**d, "scenarios": {}}, "baseline report main.json: scenarios: must be a list, got an object"),
        (
            lambda d: d["scenarios"][1].update(status="maybe"),
            "scenarios[1].status: must be pass, fail or incomplete, got 'maybe'",
        ),
        (
            lambda d: d["scenarios"][0]["attempts"][3]["assertions"][0].pop("assertion") and None,
            "scenarios[0].attempts[3].assertions[0].assertion: is missing",
        ),
        (lambda d: d["scenarios"][0]["reliability"].update(passed=9), "scenarios[0].reliability: counts must add up to runs"),
        (
            lambda d: d["scenarios"][0]["attempts"][0]["observation"]["tool_calls"].append({"name": 7}),
            "scenarios[0].attempts[0].observation.tool_calls[0].name: must be a non-empty string",
        ),
        (lambda d: d["scenarios"].append(d["scenarios"][0]), "scenarios[3].id: repeats the scenario id 'greets'"),
    ],
)
def test_a_malformed_baseline_is_a_clear_error_naming_the_json_path(change: Any, problem: str) -> None:
    data = valid()
    changed = change(data)
    text = changed if isinstance(changed, str) else json.dumps(data if changed is None else changed)
    with pytest.raises(BaselineError) as raised:
        parse_baseline(text, "main.json")
    assert any(problem in line for line in raised.value.details()), raised.value.details()
    assert str(raised.value).startswith("baseline report main.json: ")


def test_version_1_and_version_2_baselines_both_work() -> None:
    v1_main = report((EXAMPLE / "contract.yml").read_text(), (EXAMPLE / "observations-good.json").read_text())
    v1 = parse_baseline(json_renderer.render(v1_main), "v1.json")
    assert v1.source.contract_version == 1 and not any(s.repeated for s in v1.run.scenarios)
    v2 = baseline_of(report(CONTRACT, evidence()))
    greets = v2.run.by_id()["greets"]
    assert greets.repeated and greets.attempts.passed == 8 and greets.assertions["response.icontains[0]"].passed == 8


def test_a_baseline_of_another_contract_is_compared_by_id_and_says_so() -> None:
    run = gated(evidence(), evidence(), pr_contract=CONTRACT.replace("Say hello.", "Greet me."))
    assert run.baseline is not None
    assert run.baseline.contract_note.startswith("the contract changed since the baseline")
    elsewhere = valid()
    elsewhere["behavegate"]["contract_path"] = "agents/other.yml"
    elsewhere["contract"]["digest"] = "0" * 64
    note = compare(parse_baseline(json.dumps(elsewhere), "b.json"), report(CONTRACT, evidence())).contract_note
    assert note == "the baseline is of another contract file (agents/other.yml); scenarios are matched by id"


def test_parallel_tool_calls_are_normalized_and_a_changed_sequence_is_reported() -> None:
    assert normalized([("b", 1), ("a", 1), ("c", None), ("z", 2), ("y", 2)]) == ("a", "b", "c", "y", "z")
    assert normalized([("b", None), ("a", None)]) == ("b", "a")
    run = gated(evidence(looks_up=8), evidence(looks_up=7))  # 1 of 8 refunds: noise, and the most common path holds
    assert "tool_sequence looks-up" not in kinds(run.baseline)["changes"]
    changed = gated(evidence(looks_up=8), evidence(looks_up=3))
    sequence = next(f for f in changed.baseline.changes if f.kind == "tool_sequence")  # type: ignore[union-attr]
    assert sequence.message == "most common tool sequence was lookup_order (8/8 attempts), is issue_refund (5/8 attempts)"


def test_the_json_report_carries_the_comparison_without_touching_skylos_keys() -> None:
    plain = report(CONTRACT, evidence(greets=2))
    before = plain.to_json()
    run = plain.gated(compare(baseline_of(report(CONTRACT, evidence())), plain), "regression")
    after = run.to_json()
    assert {k: v for k, v in after.items() if k != "behavegate"} == {k: v for k, v in before.items() if k != "behavegate"}
    fresh = report(CONTRACT, evidence(greets=2)).gated(run.baseline, "regression").to_json()
    assert after["behavegate"] == fresh["behavegate"]  # the reused JSON view is the one a fresh report gives
    block = after["behavegate"]
    assert block["gate_status"] == "fail" and block["fail_on"] == "regression"
    assert block["baseline"]["regressions"][0]["kind"] == "pass_rate_drop"


def test_under_a_suite_floor_scenario_regressions_do_not_gate_but_the_suite_rate_does() -> None:
    floor = CONTRACT.replace(
        "defaults: {runs: 8, min_pass_rate: 0.5}", "defaults: {runs: 8, min_pass_rate: 0.5}\ngates: {min_pass_rate: 0.3}"
    )
    run = gated(evidence(), evidence(policy=False), contract=floor)
    assert run.baseline is not None and [f.gating for f in run.baseline.regressions] == [False]
    assert run.gate_status == "pass"


# --- as a user runs it ----------------------------------------------------------------------


def test_main_versus_pull_request_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONTRACT)
    (tmp_path / "main-obs.json").write_text(json.dumps(evidence(greets=7)))
    assert main(["test", "contract.yml", "--observations", "main-obs.json", "--report", "main.json", "--no-artifacts"]) == 0
    (tmp_path / "noise.json").write_text(json.dumps(evidence(greets=6)))
    (tmp_path / "drop.json").write_text(json.dumps(evidence(greets=1, policy=False)))
    capsys.readouterr()
    args = ["test", "contract.yml", "--baseline", "main.json", "--fail-on", "regression", "--no-artifacts"]
    assert main([*args, "--observations", "noise.json"]) == 0
    assert "Gate --fail-on regression: pass: no regression against the baseline" in capsys.readouterr().out
    assert main([*args, "--observations", "drop.json", "--github-output", "out.txt", "--junit", "j.xml"]) == 1
    out = capsys.readouterr().out
    assert out.index("REGRESSION greets: pass rate dropped") < out.index("Scenario ")  # regressions lead
    assert "regressions=3\n" in (tmp_path / "out.txt").read_text()
    assert (tmp_path / "j.xml").read_text().index("behavegate baseline: main.json") < (tmp_path / "j.xml").read_text().index(
        'name="contract.yml"'
    )
    default = ["test", "contract.yml", "--baseline", "main.json", "--observations", "drop.json", "--no-artifacts"]
    assert main(default) == 1  # the default gate: the run's own status, as without a baseline


def test_fail_on_regression_needs_a_baseline_and_a_bad_baseline_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONTRACT)
    (tmp_path / "obs.json").write_text(json.dumps(evidence()))
    run = ["test", "contract.yml", "--observations", "obs.json", "--no-artifacts"]
    assert main([*run, "--fail-on", "regression"]) == 2
    assert "--fail-on regression needs --baseline REPORT" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"kind": "agent_behavior"}')
    assert main([*run, "--baseline", "bad.json", "--format", "json"]) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["behavegate"]["status"] == "error" and payload["error"].startswith("baseline report bad.json: ")
    assert main([*run, "--baseline", "../outside.json"]) == 2
    assert "Baseline report ../outside.json is outside the project root" in capsys.readouterr().err


def test_fail_on_fail_lets_an_incomplete_run_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONTRACT)
    data = evidence()
    data["scenarios"][-1] = {"id": "policy", "error": "timeout"}
    (tmp_path / "obs.json").write_text(json.dumps(data))
    run = ["test", "contract.yml", "--observations", "obs.json", "--no-artifacts"]
    assert main(run) == 2
    assert main([*run, "--fail-on", "fail"]) == 0


# --- every view leads with the comparison (golden files) -----------------------------------


@pytest.mark.parametrize("view", ["table", "summary", "junit", "annotations", "json"])
def test_every_view_leads_with_the_regressions(view: str, golden: Golden) -> None:
    from behavegate.render import annotations, junit, summary, table

    run = showcase()
    if view == "json":
        text = json.dumps(run.to_json()["behavegate"]["baseline"], indent=2, sort_keys=True)
    else:
        text = {"table": table, "summary": summary, "junit": junit, "annotations": annotations}[view].render(run)
        first = {
            "table": "REGRESSION",
            "summary": "Regressions against the baseline",
            "junit": "regression: ",
            "annotations": "regression",
        }
        assert text.index(first[view]) < min(text.index(s) for s in ("looks-up", "greets") if s in text) + 200
    if view == "junit":
        from lxml import etree  # type: ignore[import-untyped]  # lxml ships no type hints

        schema = etree.XMLSchema(etree.parse(str(Path(__file__).parent / "junit" / "junit.xsd")))
        assert schema.validate(etree.fromstring(text.encode())), schema.error_log
    golden.check(f"baseline-{view}.txt", text if text.endswith("\n") else text + "\n")


# --- the Action -------------------------------------------------------------------------------


def test_the_action_passes_baseline_and_fail_on_to_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from behavegate.github import action
    from behavegate.github.action import Inputs, build_argv

    argv = build_argv(Inputs({"INPUT_BASELINE": "main/behavegate-report.json", "INPUT_FAIL-ON": "regression"}), {})
    assert argv[argv.index("--baseline") + 1] == "main/behavegate-report.json"
    assert argv[argv.index("--fail-on") + 1] == "regression"
    argv = build_argv(Inputs({"INPUT_BASELINE": "b.json", "INPUT_FAIL-ON": "fail"}), {})
    assert argv[argv.index("--fail-on") + 1] == "fail"
    # Refused by the CLI, in its words, and the step fails.
    (tmp_path / "contract.yml").write_text(CONTRACT)
    environ = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_CONTRACT": "contract.yml", "INPUT_FAIL-ON": "regression"}
    assert action.main(environ) == 2
    assert "--fail-on regression needs --baseline REPORT" in capsys.readouterr().err


def test_the_action_gates_a_pull_request_on_regressions_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from behavegate.github import action

    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONTRACT)
    (tmp_path / "main-obs.json").write_text(json.dumps(evidence(greets=7, policy=False)))
    assert main(["test", "contract.yml", "--observations", "main-obs.json", "--report", "baseline/behavegate-report.json"]) == 1
    (tmp_path / "noise.json").write_text(json.dumps(evidence(greets=6, policy=False)))  # the policy failure is pre-existing
    (tmp_path / "drop.json").write_text(json.dumps(evidence(greets=1, policy=False)))
    environ = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "INPUT_CONTRACT": "contract.yml",
        "INPUT_BASELINE": "baseline/behavegate-report.json",
        "INPUT_FAIL-ON": "regression",
    }
    assert action.main({**environ, "INPUT_OBSERVATIONS": "noise.json"}) == 0
    assert "status=fail\n" in (tmp_path / "output.txt").read_text() and "regressions=0\n" in (tmp_path / "output.txt").read_text()
    assert action.main({**environ, "INPUT_OBSERVATIONS": "drop.json"}) == 1
    assert "regressions=2\n" in (tmp_path / "output.txt").read_text()
    assert action.main({**environ, "INPUT_OBSERVATIONS": "noise.json", "INPUT_BASELINE": ""}) == 2  # needs a baseline


# --- an untrusted baseline --------------------------------------------------------------------


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 200) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=6), JSON_VALUES)
def test_any_change_to_a_baseline_is_read_or_refused_never_a_crash(path: list[int], value: Any) -> None:
    root: Any = valid()
    holder: Any = None
    key: Any = None
    data = root
    for step in path:  # walk to some value of the report, then replace it
        if not isinstance(data, dict | list) or not data:
            break
        holder, key = data, (sorted(data)[step % len(data)] if isinstance(data, dict) else step % len(data))
        data = holder[key]
    holder[key] = value
    try:
        parse_baseline(json.dumps(root), "b.json")
    except BaselineError as error:
        assert error.details() and all(line.startswith("baseline report b.json: ") for line in error.details())


def test_a_hostile_tool_name_in_the_baseline_stays_inert() -> None:
    data = valid()
    for attempt_ in data["scenarios"][1]["attempts"]:
        attempt_["observation"]["tool_calls"] = [{"name": "`</sub><img src=x>\n::error::owned|"}]
    current = report(CONTRACT, evidence())
    run = current.gated(compare(parse_baseline(json.dumps(data), "b.json"), current), "regression")
    from behavegate.render import annotations, summary, table

    change = next(f for f in run.baseline.changes if f.kind == "tool_sequence")  # type: ignore[union-attr]
    assert "\n" not in change.message
    text = summary.render(run)
    line = next(row for row in text.splitlines() if "tool sequence changed" in row)
    assert "<img" in line and len(re.findall(r"(?<!\\)\|", line)) == 6  # in a code span, the pipe escaped: 5 cells
    assert "\n::error::owned" not in table.render(run) + annotations.render(run)


def test_the_readme_workflow_passes_actionlint_against_our_action_yml(tmp_path: Path) -> None:
    """The README's main-versus-pull-request workflow, linted as a workflow: expressions,
    the inputs of actions/download-artifact and of this repository's action.yml."""
    import re
    import shutil
    import subprocess
    import sys

    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed")
    root = Path(__file__).resolve().parents[1]
    block = re.search(r"<!-- baseline-workflow -->\n```yaml\n(.*?)```", (root / "docs" / "baselines.md").read_text(), re.S)
    assert block, "docs/baselines.md lost its baseline workflow"
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".git").mkdir()  # a repository root, where `uses: ./` finds action.yml
    shutil.copy(root / "action.yml", tmp_path / "action.yml")
    shutil.copy(root / "Dockerfile", tmp_path / "Dockerfile")
    workflow = tmp_path / ".github" / "workflows" / "agent-behavior.yml"
    workflow.write_text(block.group(1).replace("<owner>/behavegate@v1", "./"))
    linted = subprocess.run([actionlint, "-no-color", str(workflow)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    workflow.write_text(block.group(1).replace("<owner>/behavegate@v1", "./").replace("baseline: ", "baselin: "))
    misspelled = subprocess.run(
        [actionlint, "-no-color", str(workflow)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert 'input "baselin" is not defined' in misspelled.stdout  # our action.yml was read


def test_a_version_2_baseline_of_more_than_a_thousand_scenarios_is_read() -> None:
    """A version-2 suite may hold 100,000 scenarios; its main-branch report is a baseline too."""
    data = valid()
    first = data["scenarios"][0]
    data["scenarios"] = [{**first, "id": f"s{i:05d}"} for i in range(1_001)]
    baseline = parse_baseline(json.dumps(data), "main.json")
    assert len(baseline.run.scenarios) == 1_001
    data["scenarios"][1_000]["id"] = "s00007"
    with pytest.raises(BaselineError) as raised:
        parse_baseline(json.dumps(data), "main.json")
    assert any("scenarios[1000].id: repeats the scenario id 's00007'" in line for line in raised.value.details())
