"""Golden files for every renderer, on the refund-agent example."""

from __future__ import annotations

import html
import json

import pytest
from conftest import Golden
from helpers import edit_result, example_report, report

from behavegate.render import annotations as annotations_renderer
from behavegate.render import json as json_renderer
from behavegate.render import junit as junit_renderer
from behavegate.render import summary as summary_renderer
from behavegate.render import table as table_renderer


@pytest.mark.parametrize("which", ["good", "regressed"])
def test_json_report_matches_golden(which: str, golden: Golden) -> None:
    golden.check(f"report-{which}.json", json_renderer.render(example_report(which)) + "\n")


@pytest.mark.parametrize("which", ["good", "regressed"])
def test_table_matches_golden(which: str, golden: Golden) -> None:
    golden.check(f"table-{which}.txt", table_renderer.render(example_report(which)) + "\n")


def test_table_shows_failed_assertions_with_contract_lines() -> None:
    text = table_renderer.render(example_report("regressed"))
    assert "FAIL tools.forbidden[0] [contract.yml:" in text
    assert "forbidden tool 'issue_refund' was called" in text


ARGUMENT_MISMATCH = """\
version: 1
agent:
  tools:
    - {name: issue_refund, description: Pay money back, parameters: {type: object}}
scenarios:
  - id: refunds-order
    prompt: Refund order A-1.
    expect:
      tools:
        required: [{name: issue_refund, arguments: {order_id: A-1}}]
"""


@pytest.mark.parametrize("view", ["table", "summary", "annotations", "junit"])
def test_an_argument_mismatch_shows_the_arguments_sent_beside_the_expected_ones(view: str) -> None:
    sent = {"name": "issue_refund", "arguments": {"order_id": "B-2"}}
    observation = {
        "id": "refunds-order",
        "response": "Done.",
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [sent],
    }
    run = report(ARGUMENT_MISMATCH, {"version": 1, "scenarios": [observation]})
    renderers = {
        "table": table_renderer,
        "summary": summary_renderer,
        "annotations": annotations_renderer,
        "junit": junit_renderer,
    }
    text = renderers[view].render(run)
    assert "issue_refund' was called with non-matching arguments" in text
    expected = '{"arguments": {"order_id": "A-1"}, "name": "issue_refund"}'
    assert (expected if view != "junit" else html.escape(expected)) in text
    said = 'sent issue_refund {"order_id": "B-2"}'
    assert (said if view != "junit" else html.escape(said)) in text


def test_table_keeps_control_characters_inert() -> None:
    report = edit_result(example_report("regressed"), 0, "fail", v0={"status": "fail", "message": "bad\x1b[31m\r::error::x"})
    text = table_renderer.render(report)
    assert "\x1b" not in text and "\r" not in text


def test_a_large_runs_table_lists_only_the_scenarios_that_did_not_pass_and_verbose_lists_all() -> None:
    from helpers import report

    rows = "\n".join(f"  - {{id: s{i:02d}, prompt: p, expect: {{response: {{contains: [w{i}]}}}}}}" for i in range(60))
    contract = f"version: 1\nagent: {{endpoint: http://127.0.0.1:1/v1}}\nscenarios:\n{rows}\n"
    observed = [
        {
            "id": f"s{i:02d}",
            "response": "nothing" if i == 7 else f"w{i}",
            "finish_reason": "stop",
            "response_complete": True,
            "tool_calls_complete": True,
            "tool_calls": [],
            "refusal": False,
            "sources": [],
        }
        for i in range(60)
    ]
    run = report(contract, json.dumps({"version": 1, "scenarios": observed}))
    text = table_renderer.render(run)
    assert "s07       fail" in text and "s08" not in text.split("\n\n")[1]
    assert "(59 passing scenarios not listed: --verbose lists every one" in text
    assert "Scenarios: 60 |" in text
    from behavegate.render import summary

    markdown = summary.render(run)
    assert "`s07`" in markdown and "`s08`" not in markdown and "_59 passing scenarios not listed;" in markdown
    every = table_renderer.render(run, "verbose")
    assert all(f"s{i:02d}" in every for i in range(60)) and "not listed" not in every


def test_a_large_run_that_passed_lists_no_header_over_no_rows() -> None:
    from helpers import report

    rows = "\n".join(f"  - {{id: s{i:02d}, prompt: p, expect: {{response: {{contains: [w{i}]}}}}}}" for i in range(51))
    observed = [
        {
            "id": f"s{i:02d}",
            "response": f"w{i}",
            "finish_reason": "stop",
            "response_complete": True,
            "tool_calls_complete": True,
            "tool_calls": [],
            "refusal": False,
            "sources": [],
        }
        for i in range(51)
    ]
    run = report(
        f"version: 1\nagent: {{endpoint: http://127.0.0.1:1/v1}}\nscenarios:\n{rows}\n",
        json.dumps({"version": 1, "scenarios": observed}),
    )
    from behavegate.render import summary

    assert "Scenario  Status" not in table_renderer.render(run) and "(51 passing scenarios not listed" in table_renderer.render(
        run
    )
    assert "| scenario |" not in summary.render(run) and "_51 passing scenarios not listed;" in summary.render(run)
