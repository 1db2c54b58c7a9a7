"""Deeper conversations: ``tool_results`` rules (name + argument subset, first match,
default), ``response.uses_tool_result``, ``tools.no_repeat``, ``turns.max``, possible
loops at ``max_turns``, and usage and latency over the whole conversation: each against
a real loopback agent, and each replayed offline from the recorded run."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_agent import FakeAgent, Reply, Request, serve
from helpers import contract
from hypothesis import given
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.conversation import ToolResultRule
from behavegate.errors import ContractError, ObservationError
from behavegate.evidence.observation_file import parse_observation_text
from behavegate.evidence.scripted import Answer, answer, canonical_call, repeated_calls, rule_for
from behavegate.judge.conversation_checks import _MISSING, appears_in, field_value
from behavegate.model import Expectation, Scenario, ToolCall

# --- rule matching ----------------------------------------------------------------------

RULES = (
    ToolResultRule("lookup", {"order_id": "A-1"}, content={"status": "shipped"}),
    ToolResultRule("lookup", {"order_id": "B-2"}, error="not found"),
    ToolResultRule("lookup", None, content={"status": "unknown"}),
    ToolResultRule("refund", {"order": {"id": 7}}, content="ok"),
    ToolResultRule(None, None, error="no such tool"),
)


def test_the_first_rule_whose_name_and_argument_subset_match_answers() -> None:
    assert rule_for(RULES, ToolCall("lookup", {"order_id": "A-1", "verbose": True})) is RULES[0]
    assert rule_for(RULES, ToolCall("lookup", {"order_id": "B-2"})) is RULES[1]
    assert rule_for(RULES, ToolCall("lookup", {"order_id": "C-3"})) is RULES[2]
    assert rule_for(RULES, ToolCall("lookup", None)) is RULES[2]  # unobserved arguments match no subset


def test_nested_arguments_match_as_a_json_subset_and_numbers_by_value() -> None:
    assert rule_for(RULES, ToolCall("refund", {"order": {"id": 7.0, "note": "x"}})) is RULES[3]
    assert rule_for(RULES, ToolCall("refund", {"order": {"id": True}})) is RULES[4]  # a bool is never a number


def test_the_default_answers_what_no_rule_matches_and_without_one_nothing_does() -> None:
    assert rule_for(RULES, ToolCall("delete_everything", {})) is RULES[4]
    assert rule_for(RULES[:4], ToolCall("delete_everything", {})) is None
    assert rule_for(RULES[:4], ToolCall("refund", {"order": {"id": 8}})) is None


def test_an_answer_records_the_call_it_answered_and_what_was_sent() -> None:
    scenario = Scenario("s", "p", Expectation(), tool_rules=RULES)
    shipped = answer(scenario, ToolCall("lookup", {"order_id": "A-1"}), 3)
    failed = answer(scenario, ToolCall("lookup", {"order_id": "B-2"}), 4)
    assert isinstance(shipped, Answer) and shipped.content == '{"status": "shipped"}'
    assert shipped.record.call == 3 and shipped.record.content == {"status": "shipped"}
    assert isinstance(failed, Answer) and failed.content == '{"error": "not found"}' and failed.record.error == "not found"
    assert answer(Scenario("s", "p", scenario.expect, tool_rules=RULES[:1]), ToolCall("x", {}), 0) is None


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2),
    max_leaves=6,
)
ARGUMENTS = st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=5)


@given(ARGUMENTS, st.data())
def test_any_subset_of_a_calls_arguments_matches_it(arguments: dict[str, Any], data: st.DataObject) -> None:
    keys = data.draw(st.lists(st.sampled_from(sorted(arguments)), unique=True) if arguments else st.just([]))
    rule = ToolResultRule("t", {key: arguments[key] for key in keys}, content=1)
    assert rule_for((rule,), ToolCall("t", arguments)) is rule
    assert rule_for((rule,), ToolCall("u", arguments)) is None  # never another tool's


@given(ARGUMENTS, st.text(max_size=3), JSON_VALUES)
def test_a_key_the_call_lacks_or_holds_differently_never_matches(arguments: dict[str, Any], key: str, value: Any) -> None:
    if key in arguments and json.dumps(arguments[key], sort_keys=True) == json.dumps(value, sort_keys=True):
        return
    if key in arguments and isinstance(value, dict) and isinstance(arguments[key], dict):
        return  # a nested object may legitimately be a subset of the observed one
    rule = ToolResultRule("t", {key: value}, content=1)
    assert rule_for((rule,), ToolCall("t", arguments)) is None


def test_identical_calls_are_found_by_canonical_json_whatever_the_key_order() -> None:
    calls = (
        ToolCall("a", {"x": 1, "y": [1, 2]}),
        ToolCall("b", {}),
        ToolCall("a", {"y": [1, 2], "x": 1}),
        ToolCall("a", None),
        ToolCall("a", None),
    )
    repeats = repeated_calls(calls)
    assert [(call.name, where) for call, where in repeats] == [("a", [0, 2])]
    assert canonical_call(calls[2]) == 'a {"x":1,"y":[1,2]}'


@pytest.mark.parametrize(
    ("content", "path", "value"),
    [
        ({"a": {"b": [10, {"c": "x"}]}}, "a.b[1].c", "x"),
        ({"a": {"b": [10, 20]}}, "a.b.1", 20),
        ('{"eta": "soon"}', "eta", "soon"),  # a string holding JSON is read as JSON
        ({"a": {"b": None}}, "a.b", None),
        ({"a": 1}, "b", _MISSING),
        ({"a": [1]}, "a[3]", _MISSING),
        ({"a": [1]}, "a.x", _MISSING),
        ("not json", "a", _MISSING),
    ],
)
def test_field_paths_are_dotted_with_list_indices(content: Any, path: str, value: Any) -> None:
    assert field_value(content, path) == value


# --- contract validation -----------------------------------------------------------------


def problems(text: str) -> list[tuple[str, int | None]]:
    with pytest.raises(ContractError) as caught:
        contract(text)
    return [(p.text, p.line) for p in caught.value.problems]


BAD_RULES = textwrap.dedent("""\
    version: 2
    agent:
      model: m
      tools:
        - {name: lookup, description: d, parameters: {type: object}}
    scenarios:
      - id: s
        prompt: p
        max_turns: 3
        tool_results:
          - {name: lookup, content: {a: 1}, error: boom}
          - {arguments: {x: 1}, content: 1}
          - {name: lookup, colour: red, content: 1}
          - {name: lookup}
          - {name: "bad name!", content: 1}
          - {name: lookup, arguments: [1], content: 1}
          - {name: lookup, content: 1}
          - {name: lookup, arguments: {x: 2}, content: 1}
          - {default: {content: 1}, name: lookup}
          - {default: {error: x}}
          - {default: {error: ""}}
        expect:
          response:
            uses_tool_result:
              - {tool: lookup, field: "a..b"}
              - {tool: other, field: a}
              - {tool: lookup}
          tools: {no_repeat: maybe}
          turns: {max: 0}
    """)


def test_every_rule_list_problem_is_reported_at_its_line() -> None:
    assert problems(BAD_RULES) == [
        ("scenarios[0].tool_results[0] takes content or error, not both", 11),
        ("scenarios[0].tool_results[1].name is required", 12),
        ("Unknown behavior contract key: scenarios[0].tool_results[2].colour", 13),
        ("scenarios[0].tool_results[3] needs content or error", 14),
        ("scenarios[0].tool_results[4].name must use 1-64 letters, numbers, underscores, or hyphens", 15),
        ("scenarios[0].tool_results[5].arguments must be a mapping", 16),
        ("scenarios[0].tool_results[7] can never match: scenarios[0].tool_results[6] answers every call of 'lookup' first", 18),
        ("scenarios[0].tool_results[8] takes default alone, not with ['name']", 19),
        ("scenarios[0].tool_results[9].default must be the last rule", 20),
        ("scenarios[0].tool_results[10].default.error must be a non-empty string", 21),
        ("scenarios[0].expect.response.uses_tool_result[0].field must be a dotted path such as items[0].status, got 'a..b'", 25),
        ("scenarios[0].expect.response.uses_tool_result[2].field is required", 27),
        ("scenarios[0].expect.tools.no_repeat must be true or false", 28),
        ("scenarios[0].expect.turns.max must be between 1 and 20", 29),
    ]


def test_a_grounding_check_on_a_tool_no_rule_answers_is_a_contract_error() -> None:
    text = BAD_RULES.split("    tool_results:")[0] + textwrap.indent(
        textwrap.dedent("""\
            tool_results:
              - {name: lookup, content: {a: 1}}
            expect:
              response:
                uses_tool_result:
                  - {tool: lookup, field: a}
                  - {tool: other, field: a}
        """),
        "    ",
    )
    assert problems(text) == [
        (
            "scenarios[0].expect.response.uses_tool_result[1].tool: no tool_results entry answers 'other', "
            "so its result can never be used",
            16,
        )
    ]


def test_an_empty_rule_list_is_an_error_and_the_mapping_form_still_loads() -> None:
    base = "version: 2\nagent: {model: m}\nscenarios:\n  - id: s\n    prompt: p\n    expect: {refusal: false}\n"
    assert problems(base + "    tool_results: []\n") == [("scenarios[0].tool_results must contain at least one rule", 7)]
    loaded = contract(base + "    tool_results: {lookup: {status: ok}}\n")
    assert loaded.scenarios[0].tool_results == {"lookup": {"status": "ok"}} and loaded.scenarios[0].tool_rules is None


def test_version_1_knows_none_of_the_new_keys() -> None:
    text = textwrap.dedent("""\
        version: 1
        agent: {model: m}
        scenarios:
          - id: s
            prompt: p
            expect:
              response: {contains: [x], uses_tool_result: [{tool: a, field: b}]}
              tools: {no_repeat: true}
              turns: {max: 2}
        """)
    texts = [text for text, _ in problems(text)]
    assert "Unknown behavior contract key: scenarios[0].expect.turns" in texts
    assert "Unknown behavior contract key: scenarios[0].expect.response.uses_tool_result" in texts
    assert "Unknown behavior contract key: scenarios[0].expect.tools.no_repeat" in texts


# --- a real loopback agent -------------------------------------------------------------------


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class ScriptedAgent:
    """Behaves as its prompt says; each turn's answer depends on the tool messages so far."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def __call__(self, request: Request) -> Reply:
        messages = request.json()["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        results = [m["content"] for m in messages if m["role"] == "tool"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        calls, text = self.script(prompt, turn, results)
        message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": calls}
        reason = "tool_calls" if calls else "stop"
        body = {"choices": [{"message": message, "finish_reason": reason}], "usage": {"total_tokens": 100 + turn}}
        return Reply(json.dumps(body).encode(), delay_s=self.delay)

    @staticmethod
    def script(prompt: str, turn: int, results: list[str]) -> tuple[list[dict[str, Any]], str | None]:
        a1 = _call(f"c{turn}", "lookup_order", {"order_id": "A-1"})
        if prompt == "loop":
            return [a1], None
        if prompt == "unmatched":
            return ([_call("c0", "lookup_order", {"order_id": "Z-9"})], None) if turn == 0 else ([], "?")
        if prompt == "no call":
            return [], "I cannot look that up."
        if prompt == "repeat":
            return ([a1], None) if turn < 2 else ([], f"It ships {json.loads(results[-1])['eta']}.")
        if prompt == "both":  # two calls in one turn, answered by different rules
            calls = [_call("c1", "lookup_order", {"order_id": "A-1"}), _call("c2", "lookup_order", {"order_id": "B-2"})]
            return (calls, None) if turn == 0 else ([], " | ".join(results))
        if turn == 0:
            return [a1], None
        if prompt == "grounded":
            return [], f"Order A-1 ships on {json.loads(results[0])['eta']}."
        return [], "Your order is on its way."  # ungrounded


RULES_YAML = """\
    tool_results:
      - {name: lookup_order, arguments: {order_id: A-1}, content: {status: shipped, eta: "2026-01-09", lines: [{sku: X1}]}}
      - {name: lookup_order, arguments: {order_id: B-2}, error: order not found}"""

CONVERSATIONS = f"""\
version: 2
agent:
  model: m
  missing_tool_calls: none
  tools:
    - {{name: lookup_order, description: d, parameters: {{type: object}}}}
scenarios:
  - id: grounded
    prompt: grounded
    max_turns: 4
{RULES_YAML}
    expect:
      response: {{uses_tool_result: [{{tool: lookup_order, field: eta}}]}}
      tools: {{no_repeat: true}}
      turns: {{max: 2}}
      usage: {{max_total_tokens: 201}}
  - id: ungrounded
    prompt: ungrounded
    max_turns: 4
{RULES_YAML}
    expect:
      response: {{uses_tool_result: [{{tool: lookup_order, field: eta}}]}}
  - id: never-called
    prompt: no call
    max_turns: 4
{RULES_YAML}
    expect:
      response: {{uses_tool_result: [{{tool: lookup_order, field: eta}}]}}
  - id: field-missing
    prompt: grounded
    max_turns: 4
{RULES_YAML}
    expect:
      response: {{uses_tool_result: [{{tool: lookup_order, field: "lines[0].price"}}]}}
  - id: repeat
    prompt: repeat
    max_turns: 4
{RULES_YAML}
    expect:
      response: {{uses_tool_result: [{{tool: lookup_order, field: "lines[0].sku"}}], contains: [ships]}}
      tools: {{no_repeat: true}}
      turns: {{max: 2}}
  - id: loop
    prompt: loop
    max_turns: 3
{RULES_YAML}
    expect:
      response: {{contains: [shipped]}}
      tools: {{max_calls: 10}}
      turns: {{max: 3}}
  - id: unmatched
    prompt: unmatched
    max_turns: 3
{RULES_YAML}
    expect:
      tools: {{max_calls: 10}}
  - id: both
    prompt: both
    max_turns: 2
{RULES_YAML}
    expect:
      response: {{contains: ["order not found", "shipped"]}}
      tools: {{no_errors: true}}
"""


@pytest.fixture
def scripted() -> Iterator[FakeAgent]:
    with FakeAgent(ScriptedAgent()) as fake:
        yield fake


@pytest.fixture
def agent(scripted: FakeAgent) -> str:
    return scripted.url


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["test", *args, "--format", "json", "--no-artifacts"])
    return code, json.loads(capsys.readouterr().out)


def verdicts(report: dict[str, Any]) -> dict[str, dict[str, tuple[str, str]]]:
    return {s["id"]: {v["assertion"]: (v["status"], v["message"]) for v in s["assertions"]} for s in report["scenarios"]}


@pytest.fixture
def live(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONVERSATIONS)
    return run_json(["contract.yml", "--endpoint", agent, "--save-observations", "recorded.json"], capsys)


def test_an_answer_grounded_in_the_scripted_result_passes(live: tuple[int, dict[str, Any]]) -> None:
    found = verdicts(live[1])["grounded"]
    assert found["response.uses_tool_result[0]"] == ("pass", "the answer contains '2026-01-09' from lookup_order.eta")
    assert found["tools.no_repeat"][0] == "pass" and found["turns.max"] == ("pass", "model turns 2 is within 2")
    grounded = live[1]["scenarios"][0]["observation"]
    assert grounded["conversation"] == {
        "turns": 2,
        "max_turns": 4,
        "possible_loop": False,
        "results": [
            {"call": 0, "name": "lookup_order", "content": {"status": "shipped", "eta": "2026-01-09", "lines": [{"sku": "X1"}]}}
        ],
    }


def test_an_answer_without_the_value_fails_with_expected_and_observed(live: tuple[int, dict[str, Any]]) -> None:
    status, message = verdicts(live[1])["ungrounded"]["response.uses_tool_result[0]"]
    assert status == "fail"
    assert message == (
        "expected the answer to contain '2026-01-09' from lookup_order.eta, observed an answer of 25 characters without it"
    )


def test_a_tool_never_called_or_a_missing_field_is_incomplete_and_says_which(live: tuple[int, dict[str, Any]]) -> None:
    found = verdicts(live[1])
    assert found["never-called"]["response.uses_tool_result[0]"] == (
        "incomplete",
        "tool 'lookup_order' was never called, so no result of it can be used",
    )
    assert found["field-missing"]["response.uses_tool_result[0]"] == (
        "incomplete",
        "field 'lines[0].price' is missing from the result returned for call 0",
    )


def test_a_repeated_call_fails_no_repeat_naming_the_call_and_its_positions(live: tuple[int, dict[str, Any]]) -> None:
    found = verdicts(live[1])["repeat"]
    assert found["tools.no_repeat"] == (
        "fail",
        'expected no identical tool call twice, observed lookup_order {"order_id":"A-1"} at calls 0, 1',
    )
    assert found["turns.max"] == ("fail", "expected model turns at most 2, observed 3")
    assert found["response.uses_tool_result[0]"][0] == "fail"  # "X1" was never said
    assert found["response.contains[0]"][0] == "pass"


def test_running_out_of_max_turns_is_a_possible_loop_in_the_json_and_the_reason(live: tuple[int, dict[str, Any]]) -> None:
    loop = next(s for s in live[1]["scenarios"] if s["id"] == "loop")
    assert loop["status"] == "incomplete"
    assert loop["observation"]["conversation"]["possible_loop"] is True
    assert loop["observation"]["conversation"]["turns"] == 3
    found = verdicts(live[1])["loop"]
    assert found["response.contains[0]"] == (
        "incomplete",
        "possible loop: the agent was still calling tools when max_turns (3) ran out, with no final answer; "
        'repeated calls: lookup_order {"order_id":"A-1"} at calls 0, 1, 2: raise max_turns if the task needs more '
        "turns, or fix the agent",
    )
    assert found["turns.max"][0] == "pass" and found["tools.max_calls"][0] == "pass"  # judged on the calls so far


def test_a_call_no_rule_matches_makes_the_attempt_incomplete_naming_the_call(live: tuple[int, dict[str, Any]]) -> None:
    unmatched = next(s for s in live[1]["scenarios"] if s["id"] == "unmatched")
    assert unmatched["status"] == "incomplete"
    assert unmatched["observation"]["error"] == (
        'no tool_results rule matches the call lookup_order {"order_id":"Z-9"} at turn 1: '
        "add a rule for it, or a {default: ...} rule"
    )


def test_calls_in_one_turn_are_answered_by_their_own_rules(live: tuple[int, dict[str, Any]]) -> None:
    both = next(s for s in live[1]["scenarios"] if s["id"] == "both")
    assert (
        both["observation"]["response"]
        == '{"status": "shipped", "eta": "2026-01-09", "lines": [{"sku": "X1"}]} | {"error": "order not found"}'
    )
    assert both["observation"]["tool_errors"] == [None, "order not found"]
    assert verdicts(live[1])["both"]["tools.no_errors"][0] == "fail"


def test_usage_is_summed_over_every_request_of_the_conversation(live: tuple[int, dict[str, Any]]) -> None:
    grounded = live[1]["scenarios"][0]
    assert grounded["observation"]["total_tokens"] == 100 + 101
    assert verdicts(live[1])["grounded"]["usage.max_total_tokens"][0] == "pass"


def test_the_recorded_run_replays_offline_to_identical_verdicts(
    live: tuple[int, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = json.loads((tmp_path / "recorded.json").read_text())
    assert any("conversation" in item for item in recorded["scenarios"])
    code, offline = run_json(["contract.yml", "--observations", "recorded.json"], capsys)
    assert code == live[0] == 1  # failures beat incompletes
    assert verdicts(offline) == verdicts(live[1])
    assert [s["status"] for s in offline["scenarios"]] == [s["status"] for s in live[1]["scenarios"]]


def test_the_table_and_summary_list_each_possible_loop(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONVERSATIONS)
    main(["test", "contract.yml", "--endpoint", agent, "--scenario", "loop", "--no-artifacts", "--summary", "summary.md"])
    table = capsys.readouterr().out
    assert "Possible loop in loop attempt 1: the agent was still calling tools when max_turns (3)" in table
    summary = (tmp_path / "summary.md").read_text()
    assert "🔁 **Possible loop** `loop` attempt 1: `the agent was still calling tools" in summary


def test_latency_covers_every_request_of_the_conversation(
    scripted: FakeAgent, agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scripted.answer = ScriptedAgent(delay=0.05)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONVERSATIONS)
    _, report = run_json(["contract.yml", "--endpoint", agent, "--scenario", "loop"], capsys)
    assert len(scripted.requests) == 3
    assert report["scenarios"][0]["observation"]["latency_ms"] >= 3 * 50  # a lower bound only: never flaky


def test_a_mapping_form_conversation_still_sends_and_records_as_before(
    scripted: FakeAgent, agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = CONVERSATIONS.split("  - id: ungrounded")[0].replace(RULES_YAML, "    tool_results: {lookup_order: {eta: soon}}")
    (tmp_path / "contract.yml").write_text(text)
    code, report = run_json(["contract.yml", "--endpoint", agent], capsys)
    tool_message = next(m for m in scripted.bodies[1]["messages"] if m["role"] == "tool")
    assert tool_message == {"role": "tool", "tool_call_id": "c0", "content": '{"eta": "soon"}'}
    assert code == 0 and verdicts(report)["grounded"]["response.uses_tool_result[0]"][0] == "pass"


# --- recorded conversations in observation files --------------------------------------------


def _file(conversation: Any) -> str:
    item = {
        "id": "s",
        "response": "ok",
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [{"name": "lookup", "arguments": {}}],
        "conversation": conversation,
    }
    return json.dumps({"version": 2, "scenarios": [item]})


def _inconsistency(conversation: Any) -> str | None:
    """The attempt's incomplete reason: a broken consistency rule spoils that attempt only."""
    return parse_observation_text(_file(conversation), Path("/o.json"), attempts=True).observations["s"].error


def test_a_recorded_conversation_must_point_at_real_calls() -> None:
    good = {"turns": 2, "max_turns": 3, "possible_loop": False, "results": [{"call": 0, "name": "lookup", "content": 1}]}
    parsed = parse_observation_text(_file(good), Path("/o.json"), attempts=True)
    assert parsed.observations["s"].conversation is not None and parsed.observations["s"].error is None
    assert _inconsistency({**good, "results": [{"call": 1, "name": "lookup", "content": 1}]}) == (
        "observation_inconsistent: attempt 1, scenarios[0].conversation.results[0].call must index a tool call named "
        "'lookup' (rule conversation-result-call)"
    )
    for bad, message in [  # a record that cannot be read still refuses the file
        ({**good, "results": [{"call": 0, "name": "lookup"}]}, "scenarios[0].conversation.results[0] takes content or error"),
        ({**good, "turns": 0}, "scenarios[0].conversation.turns must be"),
        ({**good, "extra": 1}, "Unknown behavior contract key: scenarios[0].conversation.extra"),
    ]:
        with pytest.raises(ObservationError) as caught:
            parse_observation_text(_file(bad), Path("/o.json"), attempts=True)
        assert any(p.text.startswith(message) for p in caught.value.problems), caught.value.problems


def test_shards_of_a_conversation_run_merge_with_their_recorded_results(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONVERSATIONS)
    _, whole = run_json(["contract.yml", "--endpoint", agent], capsys)
    for index in (1, 2):
        main(
            ["test", "contract.yml", "--endpoint", agent, "--no-artifacts", "--shard", f"{index}/2", "--report", f"s{index}.json"]
        )
    capsys.readouterr()
    main(["merge", "s1.json", "s2.json", "--no-artifacts", "--format", "json"])
    merged = json.loads(capsys.readouterr().out)
    assert verdicts(merged) == verdicts(whole)
    conversations = [[a["observation"].get("conversation") for a in s["attempts"]] for s in merged["scenarios"]]
    assert conversations == [[a["observation"].get("conversation") for a in s["attempts"]] for s in whole["scenarios"]]
    assert conversations[0][0]["results"][0]["content"]["eta"] == "2026-01-09"


def test_a_hostile_repeated_call_is_quoted_short_on_one_line() -> None:
    from behavegate.evidence.scripted import describe_repeats

    call = ToolCall("lookup", {"q": "x\n::error::owned " + "y" * 5000})
    calls = (call,) * 40 + tuple(ToolCall(f"t{i}", {}) for i in range(8)) * 2
    text = describe_repeats(repeated_calls(calls))
    assert "\n" not in text and len(text) < 2000
    assert "at calls 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 30 more" in text and text.endswith("4 more calls repeated")


def test_a_recorded_conversation_is_redacted_like_the_rest_of_the_evidence() -> None:
    from behavegate.conversation import Conversation, ScriptedResult
    from behavegate.model import Observation
    from behavegate.report.redact import redact_observation

    conversation = Conversation(
        2, 3, (ScriptedResult(0, "t", {"token": "sk-secret-123456"}), ScriptedResult(1, "t", error="sk-secret-123456"))
    )
    redacted = redact_observation(Observation("s", conversation=conversation), "sk-secret-123456").conversation
    assert redacted is not None and "sk-secret" not in json.dumps(redacted.as_dict())


def test_the_documented_conversation_loads_and_is_answered_as_documented() -> None:
    from doc_examples import examples

    scenario = contract(examples("contract.md")["conversation"]).scenarios[0]
    assert scenario.tool_rules is not None and len(scenario.tool_rules) == 4
    shipped = answer(scenario, ToolCall("lookup_order", {"order_id": "A-1"}), 0)
    other = answer(scenario, ToolCall("lookup_order", {"order_id": "C-3"}), 1)
    stray = answer(scenario, ToolCall("cancel_order", {}), 2)
    assert isinstance(shipped, Answer) and shipped.record.content == {"status": "shipped", "eta": "2026-01-09"}
    assert isinstance(other, Answer) and other.record.content == {"status": "unknown"}
    assert isinstance(stray, Answer) and stray.record.error == "no such tool here"


def test_an_in_process_agent_gets_the_same_rules_and_the_same_unmatched_reason(tmp_path: Path) -> None:
    from behavegate.api import Call, Reply, load_contract, run_callable

    (tmp_path / "contract.yml").write_text(CONVERSATIONS)
    loaded = load_contract(tmp_path / "contract.yml")

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        prompt = messages[0]["content"]
        answered = [m for m in messages if m["role"] == "tool"]
        if answered:
            return Reply(f"ETA {json.loads(answered[0]['content'])['eta']}", total_tokens=100)
        order = "Z-9" if prompt == "unmatched" else "A-1"
        return Reply(None, [Call("lookup_order", {"order_id": order})], finish_reason="tool_calls", total_tokens=100)

    report = run_callable(loaded, agent)
    by_id = {r.scenario.id: r for r in report.results}
    assert by_id["grounded"].status == "pass"
    observation = by_id["unmatched"].observation
    assert observation is not None and str(observation.error).startswith(
        'no tool_results rule matches the call lookup_order {"order_id":"Z-9"}'
    )


def test_a_broken_rule_list_is_not_also_reported_as_answering_nothing() -> None:
    text = BAD_RULES.split("    tool_results:")[0] + textwrap.indent(
        textwrap.dedent("""\
        tool_results:
          - {name: lookup, content: 1, error: x}
        expect:
          response: {uses_tool_result: [{tool: lookup, field: a}]}
        """),
        "    ",
    )
    assert problems(text) == [("scenarios[0].tool_results[0] takes content or error, not both", 11)]


# --- what "the answer contains the value" means -----------------------------------------------

GROUNDING = """\
version: 2
agent:
  model: m
  missing_tool_calls: none
  tools:
    - {name: lookup_order, description: d, parameters: {type: object}}
scenarios:
  - id: s
    prompt: p
    max_turns: 3
    tool_results:
      - {name: lookup_order, content: {}}
    expect:
      response: {uses_tool_result: [{tool: lookup_order, field: v}]}
"""


def grounded(value: Any, answer: str) -> tuple[str, str]:
    """The verdict of uses_tool_result when lookup_order returned ``{"v": value}``."""
    from helpers import report

    observed = {
        "version": 2,
        "scenarios": [
            {
                "id": "s",
                "response": answer,
                "finish_reason": "stop",
                "response_complete": True,
                "tool_calls_complete": True,
                "tool_calls": [{"name": "lookup_order", "arguments": {}}],
                "conversation": {
                    "turns": 2,
                    "max_turns": 3,
                    "possible_loop": False,
                    "results": [{"call": 0, "name": "lookup_order", "content": {"v": value}}],
                },
            }
        ],
    }
    verdict = report(GROUNDING, observed).results[0].verdicts[0]
    return verdict.status, verdict.message


@pytest.mark.parametrize("value", ["", "   ", {}, []])
def test_an_empty_value_is_incomplete_never_a_vacuous_pass(value: Any) -> None:
    assert grounded(value, "Order 2021 costs 10.5 dollars") == (
        "incomplete",
        "the value of lookup_order.v is empty: nothing to look for",
    )


@pytest.mark.parametrize(
    ("value", "answer", "status"),
    [
        (1, "Order 2021 is ready", "fail"),  # 1 is not inside 2021
        (1, "You have 1 order", "pass"),
        (1, "1.5 hours", "fail"),
        (1, "version 1.2.3", "fail"),
        (1, "room A1", "fail"),
        (2021, "Order 2021.", "pass"),
        (2021, "Order #2021, shipped", "pass"),
        (2021, "ORD-2021 shipped", "pass"),
        (5, "minus -5 degrees", "fail"),
        (-5, "it is -5 degrees", "pass"),
        (-5, "it is 5 degrees", "fail"),
        (10.5, "costs 10.50 dollars", "pass"),
        (10.5, "costs $10.5.", "pass"),
        (10.5, "costs 10.55", "fail"),
        (10.5, "costs 110.5", "fail"),
        (1000, "costs 1,000 dollars", "pass"),
        (1000, "costs 1000", "pass"),
        (1000, "costs 1e3", "fail"),
        (1000, "codes 1,000,000", "fail"),
        (0, "0 items", "pass"),
        (2, "items 1,2,3", "pass"),
        (True, "ok: True", "pass"),
        (True, "it is TRUE", "pass"),
        (True, "that is untrue", "fail"),
        (False, "false alarm", "pass"),
        ("A-1", "order A-1 shipped", "pass"),
        ("a-1", "order A-1 shipped", "fail"),  # strings: exact, case-sensitive substring
        ("10.50", "costs 10.5", "fail"),  # a string stays a string
    ],
)
def test_numbers_match_as_whole_numbers_booleans_as_words_and_strings_as_written(value: Any, answer: str, status: str) -> None:
    assert grounded(value, answer)[0] == status


@pytest.mark.slow  # scale or timing: `make test-slow`
@pytest.mark.parametrize("fragment", ["1", "1,", "1.", "-1", "1,000", "1.2.", "a1", "\u2212", "1,2,", "9" * 40 + "."])
def test_numbers_in_a_long_answer_are_read_in_one_pass(fragment: str) -> None:
    # The same fragment repeated to 1 MB: one regex of character classes, each character read
    # a bounded number of times (a backtracking tokenizer would not finish).
    answer = (fragment * (1_000_000 // len(fragment) + 1))[:1_000_000]
    assert appears_in(7, answer) is False and appears_in(7.5, answer) is False


# --- tool_results name tools the scenario can call ---------------------------------------------

OFFERED = """\
version: 2
agent:
  model: m
  tools:
    - {name: lookup_order, description: d, parameters: {type: object}}
    - {name: refund, description: d, parameters: {type: object}}
scenarios:
  - id: a
    prompt: p
    max_turns: 3
    available_tools: [lookup_order]
    tool_results:
      - {name: other, content: y}
      - {name: refund, content: y}
      - {name: lookup_order, content: {eta: 1}}
      - {default: {error: no such tool}}
    expect: {refusal: false}
  - id: b
    prompt: p
    tool_results: {lookup_order: {eta: 1}, nothere: 1}
    expect: {refusal: false}
"""


def test_a_tool_results_entry_for_a_tool_not_declared_or_not_offered_is_an_error_at_its_line() -> None:
    assert problems(OFFERED) == [
        ("scenarios[0].tool_results[0].name must name a tool declared in agent.tools, got 'other'", 13),
        (
            "scenarios[0].tool_results[1].name must name a tool available to the scenario (available_tools: ['lookup_order']), "
            "got 'refund'",
            14,
        ),
        ("scenarios[1].tool_results.nothere must name a tool declared in agent.tools, got 'nothere'", 20),
    ]


def test_an_agent_without_declared_tools_may_script_any_tool() -> None:
    text = OFFERED.replace(
        "  tools:\n    - {name: lookup_order, description: d, parameters: {type: object}}\n"
        "    - {name: refund, description: d, parameters: {type: object}}\n",
        "",
    )
    text = text.replace("    available_tools: [lookup_order]\n", "")
    assert [s.id for s in contract(text).scenarios] == ["a", "b"]


# --- every contract problem at once ---------------------------------------------------------------


def test_a_grounding_problem_is_listed_with_the_other_problems_of_its_scenario_path_printed_once() -> None:
    text = BAD_RULES.split("    tool_results:")[0] + textwrap.indent(
        textwrap.dedent("""\
            tool_results:
              - {name: lookup, content: {a: 1}}
            expect:
              response:
                uses_tool_result:
                  - {tool: lookup, field: "a..b"}
                  - {tool: missing_tool, field: eta}
              turns: {max: 0}
        """),
        "    ",
    )
    with pytest.raises(ContractError) as caught:
        contract(text)
    assert [p.located() for p in caught.value.problems] == [
        "scenarios[0].expect.response.uses_tool_result[0].field (line 15): must be a dotted path such as items[0].status, got 'a..b'",
        "scenarios[0].expect.turns.max (line 17): must be between 1 and 20",
        "scenarios[0].expect.response.uses_tool_result[1].tool (line 16): no tool_results entry answers 'missing_tool', "
        "so its result can never be used",
    ]


def _omits_tool_calls(request: Request) -> dict[str, Any]:
    """Leaves `tool_calls` out of a turn that calls none, as most servers do."""
    messages = request.json()["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    results = [m["content"] for m in messages if m["role"] == "tool"]
    calls, text = ScriptedAgent.script("grounded", turn, results)
    message: dict[str, Any] = {"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}
    return {"choices": [{"message": message, "finish_reason": "tool_calls" if calls else "stop"}]}


def test_saved_observations_of_a_conversation_whose_last_turn_omits_tool_calls_replay_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without `missing_tool_calls: none` the last turn's calls are unobserved, but the
    earlier turns' calls are kept (the scripted results point at them), so the saved
    file replays to the same verdicts (review finding 3)."""
    monkeypatch.chdir(tmp_path)
    text = CONVERSATIONS.replace("  missing_tool_calls: none\n", "")
    (tmp_path / "c.yml").write_text(text)
    with serve(_omits_tool_calls) as url:
        main(
            [
                "test",
                "c.yml",
                "--scenario",
                "grounded",
                "--endpoint",
                url,
                "--no-artifacts",
                "--format",
                "json",
                "--save-observations",
                "o.json",
            ]
        )
    live = json.loads(capsys.readouterr().out)
    saved = json.loads((tmp_path / "o.json").read_text())["scenarios"][0]
    assert [call["name"] for call in saved["tool_calls"]] == ["lookup_order"] and saved["tool_calls_complete"] is False
    main(["test", "c.yml", "--scenario", "grounded", "--observations", "o.json", "--no-artifacts", "--format", "json"])
    offline = json.loads(capsys.readouterr().out)

    def verdicts(report: dict[str, Any]) -> list[Any]:
        return [(s["status"], [(a["assertion"], a["status"]) for a in s["assertions"]]) for s in report["scenarios"]]

    assert verdicts(offline) == verdicts(live)
    assert ("response.uses_tool_result[0]", "pass") in verdicts(live)[0][1]


def test_a_recorded_conversation_that_contradicts_itself_makes_its_attempt_incomplete_naming_the_rules() -> None:
    """Review finding 12: a possible loop has no final answer and used every turn; no record has
    more turns than its max_turns. Every broken rule is named at once, on that attempt (issue 27)."""
    looped = {"turns": 3, "max_turns": 3, "possible_loop": True, "results": [{"call": 0, "name": "lookup", "content": 1}]}
    unanswered = json.loads(_file(looped))
    unanswered["scenarios"][0].update(response=None, finish_reason="tool_calls", response_complete=False)
    parsed = parse_observation_text(json.dumps(unanswered), Path("/o.json"), attempts=True)
    assert parsed.observations["s"].conversation is not None  # a loop with no answer: consistent
    blank = json.loads(_file(looped))
    blank["scenarios"][0]["response"] = ""  # "stop" with tool calls and empty content (some servers): still a loop
    assert parse_observation_text(json.dumps(blank), Path("/o.json"), attempts=True).observations["s"].conversation
    for bad, rules in [
        (looped, ["conversation-loop-answer"]),
        ({**looped, "possible_loop": False, "turns": 50, "max_turns": 3}, ["conversation-turns"]),
        ({**looped, "turns": 2}, ["conversation-loop-turns", "conversation-loop-answer"]),
    ]:
        reason = _inconsistency(bad) or ""
        assert reason.startswith("observation_inconsistent: attempt 1, scenarios[0].conversation."), reason
        assert [part.rsplit("(rule ", 1)[1].rstrip(")") for part in reason.split("; ")] == rules, reason
    assert "scenarios[0].conversation.turns cannot exceed max_turns (3), got 50" in (
        _inconsistency({**looped, "possible_loop": False, "turns": 50, "max_turns": 3}) or ""
    )


def test_a_recorded_conversation_under_another_max_turns_than_the_contract_is_an_incomplete_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONVERSATIONS)
    recorded = {
        "turns": 2,
        "max_turns": 99,
        "possible_loop": False,
        "results": [{"call": 0, "name": "lookup_order", "content": 1}],
    }
    item = {
        "id": "loop",
        "response": "ok",
        "finish_reason": "stop",
        "response_complete": True,
        "tool_calls_complete": True,
        "tool_calls": [{"name": "lookup_order", "arguments": {}}],
        "conversation": recorded,
    }
    (tmp_path / "o.json").write_text(json.dumps({"version": 2, "scenarios": [item]}))
    code = main(["test", "contract.yml", "--observations", "o.json", "--scenario", "loop", "--no-artifacts", "--format", "json"])
    [scenario] = json.loads(capsys.readouterr().out)["scenarios"]
    assert code == 2 and scenario["status"] == "incomplete"  # its only attempt cannot be judged
    assert scenario["observation"]["error"] == (
        "observation_inconsistent: attempt 1, scenarios[0].conversation.max_turns must be the contract's max_turns for "
        "scenario 'loop' (3), not 99: record the observation again under this contract (rule conversation-max_turns-contract)"
    )
    (tmp_path / "o.json").write_text(
        json.dumps({"version": 2, "scenarios": [{**item, "conversation": {**recorded, "max_turns": 3}}]})
    )
    assert main(["test", "contract.yml", "--observations", "o.json", "--scenario", "loop", "--no-artifacts"]) != 2
