"""Trace evidence judged: the evidence rules (what a trace proves, and what it
leaves incomplete), binding traces to scenarios, and `behavegate test --traces`
run as a user and a workflow run it."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import TRACE, agent_trace, attr
from helpers import TRACE_CONTRACT as CONTRACT

from behavegate.cli import main
from behavegate.github.action import Inputs, build_argv

FIXTURES = Path(__file__).parent / "fixtures" / "traces"


def write_traces(folder: Path, *traces: list[dict[str, Any]], name: str = "traces.jsonl") -> Path:
    path = folder / name
    lines = [json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}) for spans in traces]
    path.write_text("\n".join(lines) + "\n")
    return path


def judge(
    tmp_path: Path, expect: str, *traces: list[dict[str, Any]], extra: tuple[str, ...] = (), contract: str | None = None
) -> tuple[int, dict[str, Any]]:
    (tmp_path / "contract.yml").write_text(contract or CONTRACT + "".join(f"      {line}\n" for line in expect.splitlines()))
    write_traces(tmp_path, *traces)
    report = tmp_path / "report.json"
    code = main(
        [
            "test",
            str(tmp_path / "contract.yml"),
            "--traces",
            str(tmp_path / "traces.jsonl"),
            "--report",
            str(report),
            "--no-artifacts",
            *extra,
        ]
    )
    return code, json.loads(report.read_text())


def verdicts(report: dict[str, Any], scenario: int = 0) -> dict[str, tuple[str, str]]:
    return {a["assertion"]: (a["status"], a["message"]) for a in report["scenarios"][scenario]["assertions"]}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


# --- evidence rules ---------------------------------------------------------------------------------


def test_a_full_trace_proves_passes_and_failures(tmp_path: Path) -> None:
    expect = """response: {contains: ["Refunded"]}
tools:
  required: [{name: lookup_order, arguments: {order_id: "7"}}]
  forbidden: [delete_account]
  no_errors: true
steps: {max: 3}
usage: {max_total_tokens: 1000}"""
    code, report = judge(tmp_path, expect, agent_trace())
    found = verdicts(report)
    assert {k: v[0] for k, v in found.items()} == {
        "response.contains[0]": "pass",
        "tools.required[0]": "pass",
        "tools.forbidden[0]": "pass",
        "tools.no_errors": "pass",
        "steps.max": "pass",
        "usage.max_total_tokens": "pass",
    }
    assert code == 0


def test_usage_is_the_whole_conversation_not_the_last_step(tmp_path: Path) -> None:
    code, report = judge(tmp_path, "usage: {max_total_tokens: 500}", agent_trace(tokens=(400, 50)))
    assert verdicts(report)["usage.max_total_tokens"] == ("fail", "expected total tokens at most 500, observed 900")
    assert code == 1


def test_content_capture_off_leaves_argument_assertions_incomplete_not_failed(tmp_path: Path) -> None:
    expect = """tools:
  required: [{name: lookup_order, arguments: {order_id: "7"}}]
  forbidden: [delete_account]
  calls: {lookup_order: {min: 1}}
  sequence: {mode: exact, calls: [{name: lookup_order, arguments: {order_id: "7"}}]}
safety: {pii: [email]}"""
    code, report = judge(tmp_path, expect, agent_trace(content=False))
    found = verdicts(report)
    assert found["tools.required[0]"][0] == "incomplete" and "arguments" in found["tools.required[0]"][1]
    assert found["tools.calls.lookup_order"][0] == "pass"
    assert found["tools.forbidden[0]"][0] == "pass"
    assert found["tools.sequence"][0] == "incomplete"  # the names match; the arguments it names were not recorded
    assert found["safety.pii[0]"][0] == "incomplete"  # neither the answer nor the arguments were recorded
    assert code == 2


def test_a_sequence_that_differs_by_name_fails_even_without_arguments(tmp_path: Path) -> None:
    expect = "tools: {sequence: {mode: exact, calls: [{name: issue_refund, arguments: {order_id: '7'}}]}}"
    code, report = judge(tmp_path, expect, agent_trace(content=False))
    assert verdicts(report)["tools.sequence"][0] == "fail"
    assert code == 1


def test_no_tool_spans_and_no_recorded_outputs_leave_every_tool_assertion_incomplete(tmp_path: Path) -> None:
    expect = "tools: {forbidden: [delete_account], max_calls: 3, no_errors: true}"
    code, report = judge(tmp_path, expect, agent_trace(content=False, tool_spans=False))
    found = verdicts(report)
    assert {status for status, _ in found.values()} == {"incomplete"}
    assert "content capture off" in found["tools.forbidden[0]"][1]
    assert code == 2


def test_requested_calls_without_tool_spans_are_evidence_but_not_of_results(tmp_path: Path) -> None:
    expect = "tools: {required: [{name: lookup_order, arguments: {order_id: '7'}}], no_errors: true}"
    code, report = judge(tmp_path, expect, agent_trace(tool_spans=False))
    found = verdicts(report)
    assert found["tools.required[0]"][0] == "pass"
    assert found["tools.no_errors"] == ("incomplete", "tool results were not observed")
    assert report["scenarios"][0]["observation"]["trace"]["calls"] == [{"call_id": "call_0", "executed": False, "group": 0}]
    assert code == 2


def test_a_failed_tool_span_fails_no_errors(tmp_path: Path) -> None:
    code, report = judge(
        tmp_path, "tools: {no_errors: true}", agent_trace(calls=[("lookup_order", {"order_id": "7"}, "TimeoutError")])
    )
    assert verdicts(report)["tools.no_errors"] == ("fail", "expected no failed tool calls, observed 1")
    assert report["scenarios"][0]["observation"]["tool_errors"] == ["TimeoutError"]
    assert code == 1


def test_a_missing_answer_or_a_cut_answer_leaves_response_assertions_incomplete(tmp_path: Path) -> None:
    _code, report = judge(tmp_path, 'response: {contains: ["Refunded"]}', agent_trace(content=False))
    assert verdicts(report)["response.contains[0]"][0] == "incomplete"
    assert "no final answer" in verdicts(report)["response.contains[0]"][1]
    shutil.rmtree(tmp_path / ".behavegate", ignore_errors=True)
    trace = agent_trace(answer="Refunded ord", last_finish="length")
    for span in trace:  # the answer came from the model, cut by the token cap
        span["attributes"] = [
            a for a in span["attributes"] if not (span["spanId"].startswith("a") and a["key"] == "gen_ai.output.messages")
        ]
    _, report = judge(tmp_path, 'response: {contains: ["Refunded"]}', trace)
    assert verdicts(report)["response.contains[0]"][0] == "incomplete"
    assert "finish_reason='length'" in verdicts(report)["response.contains[0]"][1]


def test_calls_requested_together_match_an_exact_sequence_in_any_order(tmp_path: Path) -> None:
    both = [("lookup_order", {"order_id": "7"}, None), ("issue_refund", {"order_id": "7"}, None)]
    expect = """tools:
  sequence: {mode: exact, calls: [{name: issue_refund}, {name: lookup_order}]}
  exact_sequence: [issue_refund, lookup_order]"""
    code, report = judge(tmp_path, expect, agent_trace(calls=both))
    assert {k: v[0] for k, v in verdicts(report).items()} == {"tools.sequence": "pass", "tools.exact_sequence": "pass"}
    assert code == 0


def test_calls_of_separate_turns_keep_their_order(tmp_path: Path) -> None:
    trace = agent_trace(
        calls=[("lookup_order", {"order_id": "7"}, None), ("issue_refund", {"order_id": "7"}, None)], content=False
    )
    refund = next(span for span in trace if span["name"] == "execute_tool issue_refund")
    refund["startTimeUnixNano"] = str(int(refund["startTimeUnixNano"]) + 40_000_000)  # after the second model step
    _code, report = judge(tmp_path, "tools: {exact_sequence: [issue_refund, lookup_order]}", trace)
    assert verdicts(report)["tools.exact_sequence"][0] == "fail"
    shutil.rmtree(tmp_path / ".behavegate", ignore_errors=True)
    _, report = judge(tmp_path, "tools: {exact_sequence: [lookup_order, issue_refund]}", trace)
    assert verdicts(report)["tools.exact_sequence"][0] == "pass"


# --- binding -------------------------------------------------------------------------------------


def test_several_traces_of_a_scenario_are_its_attempts(tmp_path: Path) -> None:
    runs = [agent_trace(f"{i:032x}", answer=answer) for i, answer in enumerate(["Refunded.", "No.", "Refunded!"], 1)]
    contract = (
        CONTRACT.replace("    expect:\n", "    min_pass_rate: 0.6\n    expect:\n") + '      response: {contains: ["Refunded"]}\n'
    )
    code, report = judge(tmp_path, "", *runs, contract=contract)
    scenario = report["scenarios"][0]
    assert [a["status"] for a in scenario["attempts"]] == ["pass", "fail", "pass"]
    assert [a["observation"]["trace"]["trace_id"] for a in scenario["attempts"]] == [f"{i:032x}" for i in (1, 2, 3)]
    assert code == 0


def test_a_trace_naming_two_scenarios_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = agent_trace()
    trace[1]["attributes"].append(attr("behavegate.scenario.id", "other"))
    (tmp_path / "contract.yml").write_text(CONTRACT + '      response: {contains: ["x"]}\n')
    write_traces(tmp_path, trace)
    assert main(["test", "contract.yml", "--traces", "traces.jsonl", "--no-artifacts"]) == 2
    assert (
        f"trace {TRACE} cannot be bound: it has several behavegate.scenario.id values: 'refund', 'other'"
        in capsys.readouterr().err
    )


def test_unbound_traces_are_listed_not_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = judge(
        tmp_path,
        'response: {contains: ["Refunded"]}',
        agent_trace(),
        agent_trace("f" * 32, scenario="ghost"),
        agent_trace("e" * 32, scenario=None),
        extra=("--trace-bind", "attribute"),
    )
    unbound = report["provenance"]["unbound_traces"]
    assert unbound["count"] == 2
    assert [u["reason"] for u in unbound["shown"]] == [
        "it names scenario 'ghost', which the contract does not have",
        "it has no behavegate.scenario.id attribute",
    ]
    assert code == 0
    main(["test", "contract.yml", "--traces", "traces.jsonl", "--no-artifacts", "--trace-bind", "attribute"])
    out = capsys.readouterr().out
    assert "2 bound to no scenario (first: trace ffffffffffffffffffffffffffffffff" in out
    assert "bind them with --trace-bind attribute (--trace-attribute NAME), conversation or prompt" in out


def test_by_default_a_trace_binds_by_the_first_rule_it_holds_and_an_unbound_one_says_what_it_held(
    tmp_path: Path,
) -> None:
    code, report = judge(
        tmp_path,
        'response: {contains: ["Refunded"]}',
        agent_trace(),  # the attribute
        agent_trace("e" * 32, scenario=None),  # no attribute: its first user message is the scenario's prompt
        agent_trace("d" * 32, scenario=None, conversation="c-9", prompt="Hello there"),  # nothing binds it
    )
    assert code == 0 and report["provenance"]["binding"] == {"by": "auto", "attribute": "behavegate.scenario.id"}
    assert report["provenance"]["traces"]["bound"] == 2
    assert [u["reason"] for u in report["provenance"]["unbound_traces"]["shown"]] == [
        "it has no behavegate.scenario.id attribute, gen_ai.conversation.id c-9 (no scenario id), "
        "first user message Hello there (no scenario's prompt)"
    ]


def test_by_default_a_prompt_two_scenarios_share_leaves_the_trace_unbound_never_a_guess(tmp_path: Path) -> None:
    contract = (
        CONTRACT
        + '      response: {contains: ["x"]}\n'
        + "  - id: twin\n    prompt: Refund order 7\n    expect: {refusal: false}\n"
    )
    code, report = judge(tmp_path, "", agent_trace(scenario=None), contract=contract)
    assert report["provenance"]["traces"]["bound"] == 0
    assert "it names no one scenario" in report["provenance"]["unbound_traces"]["shown"][0]["reason"]
    assert code == 2


def test_by_default_a_trace_that_names_one_scenario_and_asks_another_ones_prompt_is_unbound(tmp_path: Path) -> None:
    contract = (
        CONTRACT
        + '      response: {contains: ["x"]}\n'
        + "  - id: other\n    prompt: Close my account\n    expect: {refusal: false}\n"
    )
    code, report = judge(tmp_path, "", agent_trace(scenario="other"), contract=contract)
    assert report["provenance"]["traces"]["bound"] == 0
    assert report["provenance"]["unbound_traces"]["shown"][0]["reason"] == (
        "it names scenario 'other' but its first user message is the prompt of 'refund'"
    )
    assert code == 2
    # Named explicitly (--trace-bind attribute), the attribute decides: the user chose the rule.
    assert (
        judge(tmp_path, "", agent_trace(scenario="other"), contract=contract, extra=("--trace-bind", "attribute"))[1][
            "provenance"
        ]["traces"]["bound"]
        == 1
    )


@pytest.mark.parametrize(
    ("bind", "trace"),
    [
        (["--trace-bind", "conversation"], {"scenario": None, "conversation": "refund"}),
        (["--trace-bind", "prompt"], {"scenario": None}),
        (["--trace-attribute", "app.case"], {"scenario": None}),
    ],
)
def test_each_binding_rule_binds_explicitly(tmp_path: Path, bind: list[str], trace: dict[str, Any]) -> None:
    spans = agent_trace(**trace)
    if "--trace-attribute" in bind:
        spans[0]["attributes"].append(attr("app.case", "refund"))
    code, report = judge(tmp_path, 'response: {contains: ["Refunded"]}', spans, extra=tuple(bind))
    assert report["provenance"]["traces"]["bound"] == 1
    assert code == 0


def test_two_scenarios_with_one_prompt_make_prompt_binding_ambiguous(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = (
        CONTRACT
        + '      response: {contains: ["x"]}\n  - id: twin\n    prompt: Refund order 7\n    expect: {response: {contains: ["y"]}}\n'
    )
    code, report = judge(tmp_path, "", agent_trace(), extra=("--trace-bind", "prompt"), contract=contract)
    assert (code, report["behavegate"]["status"]) == (2, "error")
    assert "its first user message is the prompt of 'refund', 'twin'" in capsys.readouterr().err


def test_a_version_1_contract_takes_one_trace_per_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = CONTRACT.replace("version: 2", "version: 1") + '      response: {contains: ["Refunded"]}\n'
    code, report = judge(tmp_path, "", agent_trace(), contract=contract)
    assert (code, report["status"]) == (0, "pass")
    assert judge(tmp_path, "", agent_trace(), agent_trace("1" * 32), contract=contract)[0] == 2
    assert "scenario 'refund' has 2 traces; a version-1 contract judges one attempt per scenario" in capsys.readouterr().err


def test_a_scenario_no_trace_binds_to_is_incomplete(tmp_path: Path) -> None:
    code, report = judge(tmp_path, 'response: {contains: ["Refunded"]}', agent_trace(scenario="ghost"))
    assert (code, report["scenarios"][0]["status"]) == (2, "incomplete")


# --- the command, as users and workflows run it ------------------------------------------------


def test_the_sdk_fixtures_judged_end_to_end_with_provenance(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "traces")
    tools = "".join(
        f"    - {{name: {n}, description: x, parameters: {{type: object}}}}\n"
        for n in ["lookup_order", "get_refund_policy", "issue_refund", "search_flights", "book_flight"]
    )
    (tmp_path / "contract.yml").write_text(f"""version: 2
agent:
  tools:
{tools}scenarios:
  - id: refund-order
    prompt: x
    expect:
      tools:
        sequence: {{mode: exact, calls: [{{name: get_refund_policy}}, {{name: lookup_order}}, {{name: issue_refund}}, {{name: issue_refund}}]}}
        no_errors: true
  - id: book-flight
    prompt: y
    min_pass_rate: 0.5
    expect:
      response: {{contains: ["Booked"]}}
""")
    assert main(["test", "contract.yml", "--traces", "traces", "--report", "report.json"]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert [s["status"] for s in report["scenarios"]] == ["fail", "pass"]
    assert verdicts(report)["tools.sequence"][0] == "pass"  # the parallel pair in the other order
    assert report["scenarios"][1]["reliability"]["runs"] == 2
    provenance = report["provenance"]
    assert (provenance["kind"], provenance["trust"]) == ("trace_file", "recorded_trace")
    import hashlib

    assert {f["path"]: f["sha256"] for f in provenance["files"]} == {
        f"traces/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (tmp_path / "traces").iterdir()
        if p.name != "expected.json"
    }
    assert provenance["skipped_files"][0]["path"] == "traces/expected.json"
    run_dir = report["behavegate"]["run_dir"]
    assert main(["replay", run_dir]) == 0  # the evidence artifacts of a trace run are whole


@pytest.mark.parametrize(
    "flags",
    [
        ["--observations", "o.json"],
        ["--endpoint", "http://127.0.0.1:1/v1"],
        ["--allow-host", "agent"],
        ["--save-observations", "o.json"],
    ],
)
def test_traces_are_one_evidence_source_alone(tmp_path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "contract.yml").write_text(CONTRACT + '      response: {contains: ["x"]}\n')
    write_traces(tmp_path, agent_trace())
    assert main(["test", "contract.yml", "--traces", "traces.jsonl", *flags]) == 2
    assert "--traces cannot be combined" in capsys.readouterr().err


def test_reading_counts_against_the_run_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "contract.yml").write_text(CONTRACT + '      response: {contains: ["x"]}\n')
    write_traces(tmp_path, agent_trace())
    assert main(["test", "contract.yml", "--traces", "traces.jsonl", "--max-seconds", "0.000001"]) == 2
    assert "exceeded the run's time budget" in capsys.readouterr().err


def test_the_action_passes_trace_inputs_to_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = Inputs({"INPUT_TRACES": "traces/a.jsonl\ntraces/b", "INPUT_TRACE-BIND": "prompt", "INPUT_ENDPOINT": "http://x"})
    argv = build_argv(inputs, {})
    assert argv[:7] == ["test", "--traces", "traces/a.jsonl", "--traces", "traces/b", "--trace-bind", "prompt"]
    # An input is the flag it names: traces with a live endpoint are refused as the CLI refuses them.
    from behavegate.cli import main

    assert ("--endpoint", "http://x") in itertools.pairwise(argv)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text("version: 1\nagent: {}\nscenarios:\n  - {id: a, prompt: p, expect: {refusal: true}}\n")
    assert main([argv[0], "contract.yml", *argv[1:]]) == 2
    assert "--traces cannot be combined with live endpoint options" in capsys.readouterr().err


def test_nan_arguments_are_not_observed(tmp_path: Path) -> None:
    trace = agent_trace()
    tool = next(span for span in trace if span["name"].startswith("execute_tool"))
    tool["attributes"] = [a for a in tool["attributes"] if a["key"] != "gen_ai.tool.call.arguments"]
    tool["attributes"].append({"key": "gen_ai.tool.call.arguments", "value": {"stringValue": '{"order_id": NaN}'}})
    for span in trace:  # the model's requested call carries unusable arguments too
        for a in span["attributes"]:
            if a["key"] == "gen_ai.output.messages" and "tool_call" in a["value"]["stringValue"]:
                a["value"]["stringValue"] = a["value"]["stringValue"].replace(
                    '"arguments": {"order_id": "7"}', '"arguments": "{\\"x\\": Infinity}"'
                )
    code, report = judge(tmp_path, 'tools: {required: [{name: lookup_order, arguments: {order_id: "7"}}]}', trace)
    assert report["scenarios"][0]["observation"]["tool_calls"] == [{"name": "lookup_order", "arguments": None}]
    assert verdicts(report)["tools.required[0]"][0] == "incomplete"
    assert code == 2


def test_text_no_report_can_hold_is_an_error_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = judge(tmp_path, 'response: {contains: ["Refunded"]}', agent_trace(answer="Refunded \ud800 order"))
    assert code == 2
    assert "traces.jsonl" in capsys.readouterr().err and "unpaired surrogate" in json.dumps(report)


def test_a_model_output_cut_by_a_length_limit_is_not_a_recorded_output(tmp_path: Path) -> None:
    trace = agent_trace(tool_spans=False)
    for span in trace:  # the SDK's attribute length limit cut the JSON of the step that asked for the tool
        for a in span["attributes"]:
            if a["key"] == "gen_ai.output.messages" and "tool_call" in a["value"]["stringValue"]:
                a["value"]["stringValue"] = a["value"]["stringValue"][:40]
    code, report = judge(tmp_path, "tools: {forbidden: [delete_account], max_calls: 0}", trace)
    assert {status for status, _ in verdicts(report).values()} == {"incomplete"}
    assert code == 2


def test_an_answer_longer_than_behavegate_judges_is_incomplete_not_judged_cut(tmp_path: Path) -> None:
    code, report = judge(tmp_path, 'response: {excludes: ["SECRET"]}', agent_trace(answer="x" * 200_001 + "SECRET"))
    status, message = verdicts(report)["response.excludes[0]"]
    assert (status, code) == ("incomplete", 2)
    assert "200,001" in message or "characters" in message


def test_arguments_valid_is_incomplete_when_the_trace_did_not_record_arguments(tmp_path: Path) -> None:
    _code, report = judge(tmp_path, "tools: {arguments_valid: true}", agent_trace(content=False))
    assert verdicts(report)["tools.arguments_valid"] == (
        "incomplete",
        "arguments of the 'lookup_order' call were not observed",
    )


def test_refusal_and_sources_say_traces_do_not_record_them(tmp_path: Path) -> None:
    _, report = judge(tmp_path, "refusal: false\nsources: {required: [policy]}", agent_trace())
    assert {message for _, message in verdicts(report).values()} == {
        "explicit refusal evidence was not observed: OpenTelemetry traces do not record it",
        "explicit source evidence was not observed: OpenTelemetry traces do not record it",
    }
