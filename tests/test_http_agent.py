"""A custom HTTP agent (``agent.http``, version 2): the request template, the response
paths read as the evidence of a Chat Completions answer, an absent path or a wrong kind
unobserved with its reason, contract problems by path and line, and a real loopback
agent through the CLI with the verdicts of the same behaviour served as Chat Completions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_agent import FakeAgent, Reply, Request, json_reply, serve, sse_reply
from helpers import CUSTOM_SCENARIOS, HTTP_BLOCK, SCENARIOS, chat_or_stream, contract, custom_agent, run, verdicts
from hypothesis import given
from hypothesis import strategies as st

from behavegate.cli import main
from behavegate.errors import ContractError
from behavegate.evidence.http_agent import build_request, encode, read
from behavegate.frozen import replace
from behavegate.http_mapping import FieldPath, format_path, lookup, parse_path
from behavegate.model import Observation

CUSTOM = f"""version: 2
agent:
  endpoint: http://127.0.0.1:1/chat
{HTTP_BLOCK}  tools:
    - {{name: lookup, description: d, parameters: {{type: object}}}}
scenarios:
  - {{id: s, prompt: where is A-1, expect: {{response: {{contains: [shipped]}}}}}}
"""


def observed(raw: Any, text: str = CUSTOM) -> Observation:
    parsed = contract(text)
    return read(raw, parsed.agent, "s", 1)[0]


# --- paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("answer", ("answer",)),
        ("data.reply.text", ("data", "reply", "text")),
        ("choices[0].message.content", ("choices", 0, "message", "content")),
        ("messages[-1].text", ("messages", -1, "text")),
        ('result["key.with.dots"]', ("result", "key.with.dots")),
        ("$.answer", ("answer",)),
        ("$[0]", (0,)),
        ("$", ()),
    ],
)
def test_a_path_is_keys_and_indices(text: str, segments: tuple[str | int, ...]) -> None:
    assert parse_path(text).segments == segments


@pytest.mark.parametrize("text", ["", ".answer", "a..b", "a.", "a[x]", "a[0]b", "$answer", "a b", '["open'])
def test_a_malformed_path_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_path(text)


KEYS = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8)
SEGMENTS = st.lists(st.one_of(KEYS, st.integers(-5, 5)), min_size=1, max_size=6)


@given(SEGMENTS)
def test_any_path_written_out_reads_back_as_the_same_path(segments: list[str | int]) -> None:
    assert parse_path(format_path(tuple(segments))).segments == tuple(segments)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c d"]), inner, max_size=3),
    max_leaves=12,
)


@given(JSON_VALUES, st.lists(st.one_of(st.sampled_from(["a", "b", "c d"]), st.integers(-3, 3)), max_size=4))
def test_lookup_finds_exactly_what_indexing_finds(value: Any, segments: list[str | int]) -> None:
    here, reachable = value, True
    for segment in segments:
        fits = isinstance(segment, int) and isinstance(here, list) and -len(here) <= segment < len(here)
        fits = fits or (isinstance(segment, str) and isinstance(here, dict) and segment in here)
        if not fits:
            reachable = False
            break
        here = here[segment]
    found, got, why = lookup(value, FieldPath("p", tuple(segments)))
    assert found is reachable and (got == here if found else why)


# --- the request ----------------------------------------------------------------------------


def test_the_template_places_the_prompt_the_conversation_the_tools_and_the_token_cap() -> None:
    parsed = contract(CUSTOM)
    body = build_request(parsed.agent, parsed.scenarios[0], 64)
    history = [json.dumps({"role": "user", "content": "where is A-1"}).encode(), b'{"role": "tool", "content": "x"}']
    sent = json.loads(b"".join(encode(body, history)))
    assert sent == {
        "message": "Customer asks: where is A-1",
        "history": [{"role": "user", "content": "where is A-1"}, {"role": "tool", "content": "x"}],
        "tools": [{"type": "function", "function": {"name": "lookup", "description": "d", "parameters": {"type": "object"}}}],
        "options": {"max": 64, "session": "ci"},
    }


@given(st.lists(st.dictionaries(st.text(max_size=4), st.text(max_size=6), max_size=3), max_size=4), st.text(max_size=20))
def test_the_encoded_body_is_the_template_with_the_conversation_in_its_place(history: list[dict[str, str]], prompt: str) -> None:
    parsed = contract(CUSTOM)
    scenario = replace(parsed.scenarios[0], prompt=prompt)
    body = build_request(parsed.agent, scenario, 8)
    sent = json.loads(b"".join(encode(body, [json.dumps(m).encode() for m in history])))
    assert sent["history"] == history and sent["message"] == f"Customer asks: {prompt}"


# --- the answer -----------------------------------------------------------------------------


def test_the_answer_is_read_by_its_paths_as_a_chat_completions_answer_is() -> None:
    answered = observed({"answer": "It shipped.", "calls": [], "done": True, "used": 9})
    assert (answered.response, answered.response_complete, answered.finish_reason) == ("It shipped.", True, "stop")
    assert answered.tool_calls == () and answered.total_tokens == 9 and answered.response_gap is None
    called = observed(
        {"answer": None, "calls": [{"id": "k", "function": {"name": "lookup", "arguments": {"o": 1}}}], "done": True}
    )
    assert called.finish_reason == "tool_calls" and called.tool_calls_complete is True
    assert [(c.name, c.arguments) for c in called.tool_calls or ()] == [("lookup", {"o": 1})]
    as_text = observed({"answer": "x", "calls": [{"function": {"name": "lookup", "arguments": '{"o": 2}'}}], "done": True})
    assert [c.arguments for c in as_text.tool_calls or ()] == [{"o": 2}]


def test_the_turn_sent_back_carries_each_calls_id_made_up_when_the_answer_has_none() -> None:
    parsed = contract(CUSTOM)
    _, assistant, ids = read({"answer": None, "calls": [{"function": {"name": "lookup"}}], "done": True}, parsed.agent, "s", 3)
    assert ids == ("call_3_0",) and assistant["tool_calls"][0]["id"] == "call_3_0"
    assert assistant["tool_calls"][0]["function"] == {"name": "lookup"}  # absent arguments are not made up


@pytest.mark.parametrize(
    ("raw", "response_reason", "tool_reason"),
    [
        ({"calls": [], "done": True}, "the answer has no answer (agent.http.response.content)", None),
        ({"answer": 42, "calls": [], "done": True}, "answer is a number, not text", None),
        ({"answer": "ok", "calls": "lookup", "done": True}, None, "calls is text, not a list"),
        ({"answer": "ok", "calls": [{"function": {}}], "done": True}, None, "calls[0] has no function.name"),
        ({"answer": "ok", "calls": [{"function": {"name": 7}}], "done": True}, None, "function.name is a number, not text"),
        ({"answer": "ok", "done": True}, None, "the answer has no calls (agent.http.response.tool_calls.path)"),
        (["ok"], "the answer is a list, not an object", "the answer is a list, not an object"),
        ({"answer": "ok", "calls": []}, "the answer has no done (agent.http.response.complete)", "the answer has no done"),
        ({"answer": "ok", "calls": [], "done": 1}, "done is a number, not a boolean or a finish reason", "done is a number"),
    ],
)
def test_an_absent_path_or_a_wrong_kind_is_unobserved_with_the_reason(
    raw: Any, response_reason: str | None, tool_reason: str | None
) -> None:
    answer = observed(raw)
    for gap, reason in ((answer.response_gap, response_reason), (answer.tool_gap, tool_reason)):
        assert (gap is None) if reason is None else (gap is not None and reason in gap), (gap, reason)


def test_completeness_is_a_boolean_a_finish_reason_or_the_contracts_statement() -> None:
    assert observed({"answer": "It sh", "calls": [], "done": False}).response_complete is False
    cut = observed({"answer": "It sh", "calls": [], "done": "length"})
    assert (cut.finish_reason, cut.response_complete, cut.tool_calls_complete) == ("length", False, False)
    trusted = CUSTOM.replace("complete: done", "complete: true")
    assert observed({"answer": "It shipped.", "calls": []}, trusted).response_complete is True
    unmapped = CUSTOM.replace("      complete: done\n", "")
    gap = observed({"answer": "It shipped.", "calls": []}, unmapped).response_gap
    assert gap is not None and "maps no complete" in gap and "complete: true" in gap


def test_an_absent_tool_call_list_is_no_call_only_when_the_contract_says_so() -> None:
    stated = CUSTOM.replace("  http:\n", "  missing_tool_calls: none\n  http:\n")
    answer = observed({"answer": "It shipped.", "done": True}, stated)
    assert answer.tool_calls == () and answer.tool_gap is None
    assert observed({"answer": "It shipped.", "done": True}).tool_calls is None


# --- the contract -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "path", "message", "line"),
    [
        (("{{prompt}}", "{{promt}}"), "agent.http.request.message", "unknown placeholder {{promt}}", 6),
        (('"{{messages}}"', '"all: {{messages}}"'), "agent.http.request.history", "must be the whole value", 7),
        (("content: answer", "content: 'answer..text'"), "agent.http.response.content", "is not a path", 11),
        (("name: function.name, ", ""), "agent.http.response.tool_calls.name", "is required", 12),
        (("complete: done", "complete: false"), "agent.http.response.complete", "would leave every answer incomplete", 13),
        (("usage: {total_tokens", "usage: {tokens"), "agent.http.response.usage.tokens", "Unknown behavior contract key", 14),
        (("  http:\n", "  api: chat\n  http:\n"), "agent.api", "leave agent.api out", 4),
        (("  http:\n", "  stream: true\n  http:\n"), "agent.stream", "read as one JSON document", 4),
        (("  http:\n", "  parameters: {t: 1}\n  http:\n"), "agent.parameters", "put the keys there", 4),
        (("      options: {max", "      m: '{{model}}'\n      options: {max"), "agent.http.request", "agent.model is not set", 5),
    ],
)
def test_a_wrong_mapping_is_a_contract_error_naming_its_path_and_line(
    edit: tuple[str, str], path: str, message: str, line: int
) -> None:
    with pytest.raises(ContractError) as error:
        contract(CUSTOM.replace(*edit))
    assert any(p.path == path and message in p.text and p.line == line for p in error.value.problems), error.value.problems


def test_a_template_that_never_shows_the_scenario_is_refused() -> None:
    text = CUSTOM.replace('"Customer asks: {{prompt}}"', "hello").replace('"{{messages}}"', "[]")
    with pytest.raises(ContractError, match=r"must place \{\{prompt\}\} or \{\{messages\}\}"):
        contract(text)


def test_a_scenario_the_template_cannot_carry_whole_is_refused_where_it_is() -> None:
    only_prompt = CUSTOM.replace('      history: "{{messages}}"\n', "")
    scripted = only_prompt.replace("where is A-1, expect", "where is A-1, tool_results: {lookup: shipped}, expect")
    with pytest.raises(ContractError) as error:
        contract(scripted)
    assert [(p.path, p.line) for p in error.value.problems] == [("scenarios[0].tool_results", 17)]
    assert "place {{messages}}" in error.value.problems[0].text
    contract(only_prompt)  # a one-message scenario is carried whole by {{prompt}}


def test_agent_http_is_a_version_2_key() -> None:
    with pytest.raises(ContractError, match=r"Unknown behavior contract key: agent\.http"):
        contract(CUSTOM.replace("version: 2", "version: 1"))


# --- a real loopback agent through the CLI ----------------------------------------------------


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_a_custom_json_agent_gets_the_verdicts_of_the_same_agent_on_chat_completions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(chat_or_stream) as url:
        chat_code, chat = run(tmp_path, SCENARIOS.format(timeout=10, stream=""), url, capsys)
    with FakeAgent(custom_agent, "/chat") as agent:
        code, report = run(tmp_path, CUSTOM_SCENARIOS, agent.url, capsys)
    assert code == chat_code == 1
    assert verdicts(report) == verdicts(chat)
    assert [s["status"] for s in report["scenarios"]] == ["pass", "pass", "fail", "pass"]
    assert all(set(r) == {"message", "history", "tools", "options"} for r in agent.bodies)
    # The scripted tool result goes back in {{messages}}, after the turn that called the tool.
    second = next(r for r in agent.bodies if r["history"][-1]["role"] == "tool")
    assert second["message"] == "converses" and second["history"][0] == {"role": "user", "content": "converses"}
    called, result = second["history"][-2:]
    assert called["tool_calls"][0] == {
        "id": "k1",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"order": "B-2"}'},
    }
    assert result == {"role": "tool", "tool_call_id": "k1", "content": "shipped"}


HOSTILE: dict[str, Any] = {
    "listy": ["shipped"],
    "numbers": {"answer": 42, "calls": "lookup", "done": True},
    "undone": {"answer": "shipped", "calls": [], "done": False},
    "nameless": {"answer": "shipped", "calls": [{"function": {}}], "done": True},
    "garbage": b"shipped, I promise",
    "streamed": b'data: {"answer": "shipped", "calls": [], "done": true}\n\ndata: [DONE]\n\n',
}


def hostile_custom(request: Request) -> Reply:
    message = request.json()["message"]
    return sse_reply(HOSTILE[message]) if message == "streamed" else json_reply(HOSTILE[message])


def test_hostile_custom_answers_are_incomplete_with_a_reason_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = "".join(
        f"  - {{id: {key}, prompt: {key}, expect: {{response: {{contains: [shipped]}}, tools: {{max_calls: 0}}}}}}\n"
        for key in HOSTILE
    )
    text = f"version: 2\nagent:\n{HTTP_BLOCK.replace('Customer asks: ', '')}scenarios:\n{scenarios}"
    with serve(hostile_custom, "/chat") as url:
        code, report = run(tmp_path, text, url, capsys)
    assert code == 2
    assert [s["status"] for s in report["scenarios"]] == ["incomplete"] * len(HOSTILE)
    # A call that cannot be read leaves only the tool evidence unobserved: the text was read.
    statuses = {s["id"]: [a["status"] for a in s["assertions"]] for s in report["scenarios"]}
    assert statuses.pop("nameless") == ["pass", "incomplete"]
    assert all(status == ["incomplete", "incomplete"] for status in statuses.values()), statuses
    messages = {s["id"]: " | ".join(a["message"] for a in s["assertions"]) for s in report["scenarios"]}
    assert "the answer is a list, not an object" in messages["listy"]
    assert "answer is a number, not text" in messages["numbers"] and "calls is text, not a list" in messages["numbers"]
    assert "finish_reason='incomplete'" in messages["undone"]
    assert "calls[0] has no function.name" in messages["nameless"]
    assert "invalid JSON" in messages["garbage"] and "invalid JSON" in messages["streamed"]


def test_a_saved_custom_run_replays_with_the_same_reasons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Why a path gave no evidence is recorded with the attempt: the replay's messages are the live run's."""
    scenarios = "".join(
        f"  - {{id: {key}, prompt: {key}, expect: {{response: {{contains: [shipped]}}, tools: {{max_calls: 0}}}}}}\n"
        for key in HOSTILE
    )
    text = f"version: 2\nagent:\n{HTTP_BLOCK.replace('Customer asks: ', '')}scenarios:\n{scenarios}"
    with serve(hostile_custom, "/chat") as url:
        code, live = run(tmp_path, text, url, capsys, "--save-observations", "o.json")
    replayed_code = main(["test", "c.yml", "--observations", "o.json", "--no-artifacts", "--format", "json"])
    replayed = json.loads(capsys.readouterr().out)
    assert code == replayed_code == 2
    messages = [[a["message"] for a in s["assertions"]] for s in live["scenarios"]]
    assert [[a["message"] for a in s["assertions"]] for s in replayed["scenarios"]] == messages
    assert any("calls is text, not a list" in m for group in messages for m in group)  # the mapping's reason, not a generic one


# --- an agent that runs its own tools (response.executed_calls) -------------------------------

RAN_ITSELF = """version: 2
agent:
  http:
    request: {input: "{{prompt}}"}
    response:
      content: output
      executed_calls: {path: steps, name: tool, arguments: args, result: result, error: error}
      complete: true
  tools:
    - {name: lookup_order, description: d, parameters: {type: object, properties: {order_id: {type: string}}}}
    - {name: issue_refund, description: d, parameters: {type: object}}
scenarios:
  - id: refund
    prompt: Refund order A-1.
    expect:
      response: {contains: [shipped], uses_tool_result: [{tool: lookup_order, field: status}]}
      tools:
        required: [{name: lookup_order, arguments: {order_id: A-1}}]
        forbidden: [issue_refund]
        no_errors: true
"""


def ran_itself(request: Request) -> dict[str, Any]:
    """A framework agent's service: it ran the tools and reports each step with its result."""
    steps = [
        {"tool": "lookup_order", "args": {"order_id": "A-1"}, "result": {"status": "shipped"}, "error": None},
        {"tool": "issue_refund", "args": {"order_id": "A-1"}, "result": None, "error": "refunds need a human"},
    ]
    return {"output": "Order A-1 has shipped; I could not refund it.", "steps": steps}


def test_an_agent_that_runs_its_own_tools_is_judged_on_its_executed_calls_results_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(RAN_ITSELF)
    with serve(ran_itself, "/run") as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--no-artifacts", "--report", "r.json"])
    capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text())
    found = {a["assertion"]: a["status"] for a in report["scenarios"][0]["assertions"]}
    assert found == {
        "response.contains[0]": "pass",
        "response.uses_tool_result[0]": "pass",
        "tools.required[0]": "pass",
        "tools.forbidden[0]": "fail",
        "tools.no_errors": "fail",
    }
    assert code == 1


def test_executed_calls_that_cannot_be_read_are_calls_not_known_never_none() -> None:
    text = RAN_ITSELF
    absent = observed({"output": "Done.", "other": []}, text)
    assert absent.tool_calls is None and "steps" in (absent.tool_gap or "")
    unnamed = observed({"output": "Done.", "steps": [{"args": {}}]}, text)
    assert unnamed.tool_calls is None
    none = observed({"output": "Done.", "steps": []}, text)
    assert none.tool_calls == () and none.finish_reason == "stop" and none.tool_errors == ()


def test_a_where_filter_compares_as_json_so_true_is_not_one() -> None:
    text = RAN_ITSELF.replace("path: steps,", "path: steps, where: {done: true},")
    assert "where: {done: true}" in text
    steps = [{"tool": "lookup_order", "done": 1}, {"tool": "issue_refund", "done": True}, {"tool": "lookup_order", "done": 1.0}]
    found = observed({"output": "Done.", "steps": steps}, text)
    assert [call.name for call in found.tool_calls or ()] == ["issue_refund"]


def test_a_where_filter_that_cannot_read_an_item_leaves_the_calls_not_known() -> None:
    """A mistyped filter key must not read every answer as "no call" (a hostile review's silent false pass)."""
    text = RAN_ITSELF.replace("executed_calls: {path: steps,", "executed_calls: {path: steps, where: {kind: tool-call},")
    typo = observed({"output": "Done.", "steps": [{"type": "tool-call", "tool": "issue_refund"}]}, text)
    assert typo.tool_calls is None and "where kind" in (typo.tool_gap or "")
    odd = observed({"output": "Done.", "steps": ["issue_refund"]}, text)
    assert odd.tool_calls is None
    fine = observed({"output": "Done.", "steps": [{"kind": "message"}, {"kind": "tool-call", "tool": "lookup_order"}]}, text)
    assert fine.tool_calls is not None and [c.name for c in fine.tool_calls] == ["lookup_order"]
