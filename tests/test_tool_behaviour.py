"""Tools with behaviour (issue 39, item 2): a rule's per-call ``results`` sequence, results
filled from the call's arguments (``{{arguments.x}}``) and a scenario's key-value ``state``
read and written by scripted tools (``set``); never evaluated, deterministic, recorded so an
offline replay judges what the live run judged. Pure, then against a real loopback agent."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from doc_examples import examples
from fake_agent import FakeAgent, Request
from helpers import contract

from behavegate.cli import main
from behavegate.contract.tool_templates import render
from behavegate.conversation import Reply, ToolResultRule
from behavegate.errors import ContractError
from behavegate.evidence.mcp_server import AttemptTools
from behavegate.evidence.scripted import Answer, ScriptState, Unanswerable, answer, start
from behavegate.model import Expectation, Scenario, ToolCall


def _answers(scenario: Scenario, calls: list[ToolCall]) -> list[Answer | Unanswerable | None]:
    state: ScriptState = start(scenario)
    found: list[Answer | Unanswerable | None] = []
    for index, call in enumerate(calls):
        got = answer(scenario, call, index, state)
        found.append(got)
        if isinstance(got, Answer):
            state = got.state
    return found


def _contents(found: list[Answer | Unanswerable | None]) -> list[str]:
    return [got.content if isinstance(got, Answer) else repr(got) for got in found]


def test_a_result_sequence_answers_call_by_call_then_its_then_value_or_its_last_again() -> None:
    pending, shipped = Reply({"status": "pending"}), Reply({"status": "shipped"})
    then = ToolResultRule("track", None, content={"status": "delivered"}, results=(pending, shipped), then=True)
    last = ToolResultRule("poll", None, results=(Reply(error="busy"), Reply("ready")), then=False)
    scenario = Scenario("s", "p", Expectation(), tool_rules=(then, last))
    calls = [ToolCall("track", {}), ToolCall("poll", {}), ToolCall("track", {}), ToolCall("poll", {})]
    calls += [ToolCall("track", {}), ToolCall("poll", {})]
    assert _contents(_answers(scenario, calls)) == [
        '{"status": "pending"}',
        '{"error": "busy"}',
        '{"status": "shipped"}',
        "ready",
        '{"status": "delivered"}',
        "ready",  # no then-value: the last reply again
    ]


def test_each_rule_counts_its_own_calls_and_a_fresh_attempt_starts_again() -> None:
    a1 = ToolResultRule("lookup", {"order_id": "A-1"}, results=(Reply("a first"), Reply("a again")), then=False)
    other = ToolResultRule("lookup", None, results=(Reply("other first"), Reply("other again")), then=False)
    scenario = Scenario("s", "p", Expectation(), tool_rules=(a1, other))
    calls = [ToolCall("lookup", {"order_id": "B-2"}), ToolCall("lookup", {"order_id": "A-1"})]
    calls += [ToolCall("lookup", {"order_id": "A-1"})]
    assert _contents(_answers(scenario, calls)) == ["other first", "a first", "a again"]
    assert _contents(_answers(scenario, calls[1:2])) == ["a first"]  # the state is the attempt's, not the run's


def test_a_result_is_filled_from_the_calls_arguments_keeping_types_and_never_evaluated() -> None:
    rule = ToolResultRule(
        "lookup",
        None,
        content={"order": "{{arguments.order_id}}", "qty": "{{arguments.items[0].qty}}", "note": "order {{arguments.order_id}}!"},
    )
    scenario = Scenario("s", "p", Expectation(), tool_rules=(rule,))
    hostile = "{{state.secret}} __import__('os')"
    got = answer(scenario, ToolCall("lookup", {"order_id": hostile, "items": [{"qty": 2}]}), 0)
    assert isinstance(got, Answer)
    assert got.record.content == {"order": hostile, "qty": 2, "note": f"order {hostile}!"}  # inert: not read again


def test_a_placeholder_with_nothing_at_its_path_leaves_the_call_unanswered_naming_it() -> None:
    rule = ToolResultRule("lookup", None, content="order {{arguments.order_id}}")
    got = answer(Scenario("s", "p", Expectation(), tool_rules=(rule,)), ToolCall("lookup", {"id": 1}), 0)
    assert isinstance(got, Unanswerable)
    assert got.reason == (
        'the tool_results rule for the call lookup {"id":1} names {{arguments.order_id}}, which has no value '
        "(a placeholder is never filled with nothing)"
    )


def test_state_is_read_by_placeholders_and_written_by_set_deterministically() -> None:
    rules = (
        ToolResultRule("cancel_order", None, content={"cancelled": "{{arguments.order_id}}"}, set={"status": "cancelled"}),
        ToolResultRule("lookup_order", None, content={"status": "{{state.status}}", "refunds": "{{state.refunds}}"}),
        ToolResultRule("issue_refund", None, content="refunded {{arguments.amount}}", set={"refunds": "{{arguments.amount}}"}),
    )
    scenario = Scenario("s", "p", Expectation(), tool_rules=rules, state={"status": "open", "refunds": 0})
    calls = [ToolCall("lookup_order", {}), ToolCall("issue_refund", {"amount": 5}), ToolCall("cancel_order", {"order_id": "A-1"})]
    calls += [ToolCall("lookup_order", {})]
    found = _answers(scenario, calls)
    assert _contents(found) == [
        '{"status": "open", "refunds": 0}',
        "refunded 5",
        '{"cancelled": "A-1"}',
        '{"status": "cancelled", "refunds": 5}',
    ]
    last = found[-1]
    assert isinstance(last, Answer) and last.state.store == {"status": "cancelled", "refunds": 5}
    assert scenario.state == {"status": "open", "refunds": 0}  # the scenario's store is never written
    assert _contents(_answers(scenario, calls)) == _contents(found)  # deterministic


def test_rendering_copies_values_so_no_result_shares_the_store() -> None:
    store = {"items": [1, 2]}
    value = render("{{state.items}}", {}, store)
    value.append(3)
    assert store == {"items": [1, 2]}


def test_the_mcp_tool_server_answers_with_the_same_sequences_and_state() -> None:
    rules = (
        ToolResultRule("cancel_order", None, content="ok", set={"status": "cancelled"}),
        ToolResultRule("lookup_order", None, results=(Reply("{{state.status}}"),), then=False),
    )
    scenario = Scenario("s", "p", Expectation(), tool_rules=rules, state={"status": "open"})
    tools = AttemptTools(contract(MINIMAL).agent, scenario, "http://127.0.0.1/mcp/x")
    texts = []
    for name in ("lookup_order", "cancel_order", "lookup_order"):
        result = tools.call(name, {})
        texts.append(getattr(result.content[0], "text", None))
    assert texts == ["open", "ok", "cancelled"]
    assert [served.result.content for served in tools.calls] == ["open", "ok", "cancelled"]


MINIMAL = """\
version: 2
agent: {model: m}
scenarios: [{id: s, prompt: p, expect: {response: {contains: [x]}}}]
"""


# --- the contract ------------------------------------------------------------------------


def problems(text: str) -> list[tuple[str, int | None]]:
    with pytest.raises(ContractError) as caught:
        contract(text)
    return [(p.text, p.line) for p in caught.value.problems]


BAD = textwrap.dedent("""\
    version: 2
    agent:
      model: m
      tools:
        - {name: lookup, description: d, parameters: {type: object}}
    scenarios:
      - id: s
        prompt: p
        max_turns: 3
        state: {status: open}
        tool_results:
          - {name: lookup, arguments: {a: 1}, results: []}
          - {name: lookup, arguments: {a: 2}, results: [{content: 1, error: x}]}
          - {name: lookup, arguments: {a: 3}, results: [{colour: red}]}
          - {name: lookup, arguments: {a: 4}, content: "{{eval(1)}}"}
          - {name: lookup, arguments: {a: 5}, content: "{{state.missing}}"}
          - {name: lookup, arguments: {a: 6}, content: 1, set: {colour: red}}
          - {name: lookup, arguments: {a: 7}, content: 1, set: {status: "{{state}}"}}
          - {name: lookup, arguments: {a: 8}}
          - {default: {results: [{error: "{{arguments.x}}"}]}}
        expect: {response: {contains: [x]}}
      - id: t
        prompt: p
        state: {status: open}
        tool_results: {lookup: 1}
        expect: {response: {contains: [x]}}
    """)


def test_every_behaviour_problem_is_reported_at_its_line() -> None:
    assert problems(BAD) == [
        ("scenarios[0].tool_results[0].results must contain at least one result", 12),
        ("scenarios[0].tool_results[1].results[0] takes content or error, not both", 13),
        ("Unknown behavior contract key: scenarios[0].tool_results[2].results[0].colour", 14),
        ("scenarios[0].tool_results[2].results[0] needs content or error", 14),
        (
            "scenarios[0].tool_results[3]: {{eval(1)}} is not a placeholder of a tool result: "
            "use {{arguments.NAME}} or {{state.KEY}}",
            15,
        ),
        ("scenarios[0].tool_results[4]: {{state.missing}} names no key of the scenario's state (declared: ['status'])", 16),
        ("scenarios[0].tool_results[5].set.colour must name a key declared in the scenario's state", 17),
        ("scenarios[0].tool_results[6].set.status: {{state}} names no key of the scenario's state (declared: ['status'])", 18),
        ("scenarios[0].tool_results[7] needs content or error", 19),
        ("scenarios[1].state is read and written by tool_results rules: give tool_results as a rule list", 24),
    ]


def test_version_1_knows_no_state() -> None:
    text = "version: 1\nagent: {model: m}\nscenarios: [{id: s, prompt: p, state: {a: 1}, expect: {response: {contains: [x]}}}]\n"
    assert problems(text) == [("Unknown behavior contract key: scenarios[0].state", 3)]


# --- against a real loopback agent ------------------------------------------------------------


def answer_orders(request: Request) -> dict[str, Any]:
    """Looks an order up, cancels it, looks it up again, then says what the last lookup said;
    ``poll`` asks ``track`` until it answers delivered (at most 5 times)."""
    messages = request.json()["messages"]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    plan = [
        ("lookup_order", {"order_id": "A-1"}),
        ("cancel_order", {"order_id": "A-1"}),
        ("lookup_order", {"order_id": "A-1"}),
    ]
    if prompt == "poll":
        done = any("delivered" in r for r in results) or len(results) >= 5
        plan = [] if done else [("track", {"order_id": "A-1"})]
    elif len(results) < len(plan):
        plan = [plan[len(results)]]
    else:
        plan = []
    calls = [{"id": f"c{len(results)}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for n, a in plan]
    text = None if calls else f"Last I saw: {results[-1]}"
    message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": calls}
    reason = "tool_calls" if calls else "stop"
    return {"choices": [{"message": message, "finish_reason": reason}], "usage": {"total_tokens": 10}}


LIVE = """\
version: 2
agent:
  model: m
  missing_tool_calls: none
  tools:
    - {name: lookup_order, description: d, parameters: {type: object}}
    - {name: cancel_order, description: d, parameters: {type: object}}
    - {name: track, description: d, parameters: {type: object}}
scenarios:
  - id: stateful
    prompt: cancel A-1
    max_turns: 5
    state: {status: shipped}
    tool_results:
      - {name: lookup_order, content: {order_id: "{{arguments.order_id}}", status: "{{state.status}}"}}
      - {name: cancel_order, content: {ok: true}, set: {status: cancelled}}
    expect:
      response: {contains: [cancelled]}
      tools: {calls: {lookup_order: {max: 2}}}
  - id: sequence
    prompt: poll
    max_turns: 6
    tool_results:
      - {name: track, results: [{content: {status: packed}}, {error: carrier timeout}, {content: {status: delivered}}]}
    expect:
      response: {contains: [delivered]}
      tools: {calls: {track: {max: 3}}, no_errors: true}
"""


@pytest.fixture
def order_agent() -> Iterator[str]:
    with FakeAgent(answer_orders) as agent:
        yield agent.url


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["test", *args, "--format", "json", "--no-artifacts"])
    return code, json.loads(capsys.readouterr().out)


def _verdicts(report: dict[str, Any]) -> dict[str, list[tuple[str, str, str]]]:
    return {s["id"]: [(v["assertion"], v["status"], v["message"]) for v in s["assertions"]] for s in report["scenarios"]}


def test_stateful_and_sequenced_tools_live_and_replayed_offline_alike(
    order_agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(LIVE)
    code, live = _run(["contract.yml", "--endpoint", order_agent, "--save-observations", "recorded.json"], capsys)
    stateful, sequence = live["scenarios"]
    # The second lookup saw what the cancel wrote; the first saw the declared state.
    assert [r["content"] for r in stateful["observation"]["conversation"]["results"]] == [
        {"order_id": "A-1", "status": "shipped"},
        {"ok": True},
        {"order_id": "A-1", "status": "cancelled"},
    ]
    assert stateful["status"] == "pass"
    # packed, then a failed call, then delivered: three calls, one error, the answer grounded in the third.
    assert [(r.get("content"), r.get("error")) for r in sequence["observation"]["conversation"]["results"]] == [
        ({"status": "packed"}, None),
        (None, "carrier timeout"),
        ({"status": "delivered"}, None),
    ]
    assert dict((a, s) for a, s, _ in _verdicts(live)["sequence"]) == {
        "response.contains[0]": "pass",
        "tools.calls.track": "pass",
        "tools.no_errors": "fail",
    }
    assert code == 1
    offline_code, offline = _run(["contract.yml", "--observations", "recorded.json"], capsys)
    assert (offline_code, _verdicts(offline)) == (code, _verdicts(live))


def test_the_documented_example_loads_and_answers_as_documented() -> None:
    scenario = contract(examples("contract.md")["tool-behaviour"]).scenarios[0]
    calls = [ToolCall("track", {}), ToolCall("lookup_order", {"order_id": "A-1"}), ToolCall("cancel_order", {})]
    calls += [ToolCall("track", {}), ToolCall("lookup_order", {"order_id": "A-1"}), ToolCall("track", {})]
    assert _contents(_answers(scenario, calls)) == [
        '{"at": "depot"}',
        '{"order_id": "A-1", "status": "shipped"}',
        '{"ok": true}',
        '{"error": "carrier timeout"}',
        '{"order_id": "A-1", "status": "cancelled"}',
        '{"at": "doorstep"}',
    ]


def test_the_mcp_tool_server_refuses_calls_past_tools_max_calls_and_records_the_stop() -> None:
    from behavegate.evidence.mcp_server import tool_side
    from behavegate.judge.evaluate import evaluate_scenario
    from behavegate.model import Observation

    expect = Expectation(max_calls=2)
    rules = (ToolResultRule("lookup_order", None, content="ok"),)
    scenario = Scenario("s", "p", expect, tool_rules=rules)
    tools = AttemptTools(contract(MINIMAL).agent, scenario, "http://127.0.0.1/mcp/x")
    replies = [tools.call("lookup_order", {}) for _ in range(4)]
    assert [r.is_error for r in replies] == [False, False, True, True]
    tools.close()
    answered = Observation("s", response="done", response_complete=True, finish_reason="stop", tool_calls=())
    seen = tool_side(answered, tools)
    assert seen.conversation is not None and seen.conversation.tool_budget_exceeded is not None
    assert seen.conversation.tool_budget_exceeded.as_dict() == {"key": "tools.max_calls", "limit": 2, "observed": 3, "turn": 1}
    (verdict,) = evaluate_scenario(scenario, seen, version=2).verdicts
    assert verdict.status == "fail" and "conversation stopped" in verdict.message
