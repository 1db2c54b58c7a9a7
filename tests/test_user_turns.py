"""Conversations that go on (issue 39, items 1 and 3): scripted user turns sent after each final
answer, judged per turn (``turns[i].expect``) and as a whole, over every wire format the loop
speaks; tool-call budgets that stop the conversation (``tools.max_calls``), recorded as
``tool_budget_exceeded``; each live against a loopback agent and replayed offline alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from doc_examples import examples
from fake_agent import JUDGE, Request, as_responses, as_stream, serve, sse_reply
from helpers import contract

from behavegate.cli import main
from behavegate.errors import ContractError

ASK = "Please refund order A-1."
CHANGE = "Actually, don't refund it. Cancel the order instead."
THANKS = "Thanks, that's all."


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def decide(messages: list[dict[str, Any]], model: str) -> tuple[list[dict[str, Any]], str | None]:
    """The refund agent: looks the order up and offers the refund; when the user changes their
    mind, the good agent cancels the order, the regressed one refunds it anyway."""
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    since = [m["content"] for m in messages[users[-1] :] if m["role"] == "tool"]
    said = messages[users[-1]]["content"]
    if said == ASK:
        if not since:
            return [_call("c1", "lookup_order", {"order_id": "A-1"})], None
        return [], f"Order A-1 is {json.loads(since[-1])['status']}: I can refund $40. Shall I go ahead with the refund?"
    if said.startswith(CHANGE):
        if not since:
            name = "cancel_order" if model == "good" else "issue_refund"
            return [_call("c2", name, {"order_id": "A-1"})], None
        return [], ("Done: order A-1 is cancelled." if model == "good" else "Refunded $40 for order A-1.")
    return [], "You're welcome."


def _from_responses(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    messages = []
    for item in items:
        if item.get("type") == "function_call_output":
            messages.append({"role": "tool", "content": item["output"]})
        elif "role" in item:
            content = item["content"]
            text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
            messages.append({"role": item["role"], "content": text})
    return messages


class RefundAgent:
    """Speaks Chat Completions (plain or streamed), the Responses API and a custom JSON API."""

    requests: ClassVar[list[dict[str, Any]]] = []
    leak: ClassVar[str] = ""  # appended to the answer that offers the refund

    @staticmethod
    def answer(request: Request) -> Any:
        payload = request.json()
        RefundAgent.requests.append(payload)
        if request.path == "/v1/responses":
            calls, text = decide(_from_responses(payload["input"]), payload["model"])
        elif request.path == "/agent":
            calls, text = decide(payload["history"], payload["model"])
            return {"answer": text, "calls": calls, "done": True, "said_to": payload["message"]}
        else:
            calls, text = decide(payload["messages"], payload["model"])
        if text is not None and text.endswith("Shall I go ahead with the refund?"):
            text += RefundAgent.leak
        message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": calls or None}
        reply: dict[str, Any] = {"choices": [{"message": message, "finish_reason": "tool_calls" if calls else "stop"}]}
        reply["usage"] = {"total_tokens": 10}
        if request.path == "/v1/responses":
            return as_responses(reply)
        if payload.get("stream"):
            return sse_reply(as_stream(reply), length=False)
        return reply


WIRES = {
    "chat": "",
    "stream": "  stream: true\n",
    "responses": "  api: responses\n",
    "http": """  http:
    request: {model: "{{model}}", message: "{{prompt}}", history: "{{messages}}", tools: "{{tools}}"}
    response:
      content: answer
      tool_calls: {path: calls, name: function.name, arguments: function.arguments, id: id}
      complete: done
""",
}

REFUND = """\
version: 2
agent:
  model: {model}
  missing_tool_calls: none
{wire}  tools:
    - {{name: lookup_order, description: d, parameters: {{type: object}}}}
    - {{name: cancel_order, description: d, parameters: {{type: object}}}}
    - {{name: issue_refund, description: d, parameters: {{type: object}}}}
scenarios:
  - id: changes-their-mind
    max_turns: 6
    tool_results:
      - {{name: lookup_order, content: {{order_id: "{{{{arguments.order_id}}}}", status: delivered}}}}
      - {{name: cancel_order, content: {{cancelled: true}}}}
      - {{name: issue_refund, content: {{refunded: 40}}}}
    turns:
      - user: "{ask}"
        expect:
          response: {{contains: [refund]}}
          tools: {{required: [{{name: lookup_order, arguments: {{order_id: A-1}}}}], forbidden: [issue_refund, cancel_order]}}
      - user: "{change}"
        expect:
          response: {{contains: [cancelled]}}
          tools: {{required: [{{name: cancel_order}}], forbidden: [issue_refund]}}
      - user: "{thanks}"
        expect:
          tools: {{max_calls: 0}}
    expect:
      tools: {{forbidden: [issue_refund], max_calls: 4}}
      turns: {{max: 6}}
"""


def refund_contract(model: str, wire: str) -> str:
    return REFUND.format(model=model, wire=WIRES[wire], ask=ASK, change=CHANGE, thanks=THANKS)


@pytest.fixture
def agent_url() -> Iterator[str]:
    RefundAgent.requests = []
    with serve(RefundAgent.answer, "") as url:
        yield url


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["test", *args, "--format", "json", "--no-artifacts"])
    return code, json.loads(capsys.readouterr().out)


def _verdicts(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(a["assertion"], a["status"], a["message"]) for s in report["scenarios"] for a in s["assertions"]]


ENDPOINTS = {"chat": "/v1/chat/completions", "stream": "/v1/chat/completions", "responses": "/v1/responses", "http": "/agent"}


def _live(tmp_path: Path, base: str, model: str, wire: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    (tmp_path / "contract.yml").write_text(refund_contract(model, wire))
    args = ["contract.yml", "--endpoint", base + ENDPOINTS[wire], "--save-observations", f"{model}-{wire}.json"]
    return _run(args, capsys)


@pytest.mark.parametrize("wire", list(WIRES))
def test_a_user_who_changes_their_mind_is_answered_turn_by_turn_on_every_wire_format(
    wire: str, agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, report = _live(tmp_path, agent_url, "good", wire, capsys)
    assert {(a, s) for a, s, _ in _verdicts(report)} == {
        ("tools.forbidden[0]", "pass"),
        ("tools.max_calls", "pass"),
        ("turns.max", "pass"),
        ("turns[0].response.contains[0]", "pass"),
        ("turns[0].tools.required[0]", "pass"),
        ("turns[0].tools.forbidden[0]", "pass"),
        ("turns[0].tools.forbidden[1]", "pass"),
        ("turns[1].response.contains[0]", "pass"),
        ("turns[1].tools.required[0]", "pass"),
        ("turns[1].tools.forbidden[0]", "pass"),
        ("turns[2].tools.max_calls", "pass"),
    }
    assert code == 0
    went = report["scenarios"][0]["observation"]["conversation"]["user_turns"]
    assert [(t["user"], t["calls"], t["model_turns"]) for t in went] == [
        (ASK, [0, 1], 2),
        (CHANGE, [1, 2], 2),
        (THANKS, [2, 2], 1),
    ]
    assert went[1]["response"] == "Done: order A-1 is cancelled."
    assert len(RefundAgent.requests) == 5
    if wire == "http":  # {{prompt}} is the latest user message
        assert [r["message"] for r in RefundAgent.requests] == [ASK, ASK, CHANGE, CHANGE, THANKS]


def test_the_regressed_agent_fails_the_turn_where_it_refunds_and_replays_offline_alike(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, report = _live(tmp_path, agent_url, "bad", "chat", capsys)
    statuses = {a: s for a, s, _ in _verdicts(report)}
    failed = sorted(a for a, s in statuses.items() if s != "pass")
    assert failed == [
        "tools.forbidden[0]",
        "turns[1].response.contains[0]",
        "turns[1].tools.forbidden[0]",
        "turns[1].tools.required[0]",
    ]
    assert all(statuses[a] == "fail" for a in failed) and code == 1
    # The first turn, before the user changed their mind, passed on its own.
    assert all(s == "pass" for a, s in statuses.items() if a.startswith("turns[0]."))
    # The second user message went with the whole history: the lookup, its result, the offer.
    second = RefundAgent.requests[2]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "assistant", "user"]
    offline_code, offline = _run(["contract.yml", "--observations", "bad-chat.json"], capsys)
    assert (offline_code, _verdicts(offline)) == (code, _verdicts(report))


def test_verdicts_point_at_the_turns_lines(tmp_path: Path) -> None:
    scenario = contract(refund_contract("good", "chat")).scenarios[0]
    assert scenario.prompt == ASK and [t.user for t in scenario.turns] == [ASK, CHANGE, THANKS]
    assert scenario.assertion_lines["turns[1].tools.forbidden[0]"] == 24
    assert scenario.assertion_lines["tools.forbidden[0]"] == 29


# --- budgets that stop --------------------------------------------------------------------------


class LoopingAgent:
    """Calls lookup_order again and again, whatever it is told."""

    requests: ClassVar[int] = 0

    @staticmethod
    def answer(request: Request) -> dict[str, Any]:
        LoopingAgent.requests += 1
        call = _call(f"c{LoopingAgent.requests}", "lookup_order", {"id": 1})
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"choices": [{"message": message, "finish_reason": "tool_calls"}], "usage": {"total_tokens": 5}}


LOOPING = """\
version: 2
agent:
  model: m
  tools: [{name: lookup_order, description: d, parameters: {type: object}}]
scenarios:
  - id: stopped
    prompt: Where is my order?
    max_turns: 20
    tool_results: [{name: lookup_order, content: {status: shipped}}]
    expect:
      tools: {max_calls: 3, required: [lookup_order]}
      response: {contains: [shipped]}
"""


def test_a_looping_agent_is_stopped_at_its_call_budget_and_fails_on_that_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(LOOPING)
    LoopingAgent.requests = 0
    with serve(LoopingAgent.answer) as url:
        code, report = _run(["contract.yml", "--endpoint", url, "--save-observations", "recorded.json"], capsys)
    assert LoopingAgent.requests == 4  # three calls answered; the fourth exceeded the budget: nothing more was sent
    scenario = report["scenarios"][0]
    assert scenario["observation"]["conversation"]["tool_budget_exceeded"] == {
        "key": "tools.max_calls",
        "limit": 3,
        "observed": 4,
        "turn": 4,
    }
    assert scenario["observation"]["conversation"]["possible_loop"] is False
    found = {a: (s, m) for a, s, m in _verdicts(report)}
    stop = (
        "conversation stopped: expected at most 3 tool calls (tools.max_calls), observed 4 at turn 4; no further request was sent"
    )
    assert found["tools.max_calls"][0] == "fail" and stop in found["tools.max_calls"][1]
    assert found["tools.required[0]"][0] == "pass"  # the calls made already decide it
    assert found["response.contains[0]"] == ("incomplete", stop)  # no final answer: never a pass
    assert code == 1
    offline_code, offline = _run(["contract.yml", "--observations", "recorded.json"], capsys)
    assert (offline_code, _verdicts(offline)) == (code, _verdicts(report))


def test_a_user_turn_budget_stops_that_turn_and_the_turns_after_it_are_never_sent(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    first = "tools: {required: [{name: lookup_order, arguments: {order_id: A-1}}], forbidden: [issue_refund, cancel_order]}"
    text = refund_contract("good", "chat").replace(first, "tools: {max_calls: 0}")
    assert text != refund_contract("good", "chat")
    (tmp_path / "contract.yml").write_text(text)
    code, report = _run(["contract.yml", "--endpoint", agent_url + ENDPOINTS["chat"]], capsys)
    assert len(RefundAgent.requests) == 1
    found = {a: (s, m) for a, s, m in _verdicts(report)}
    assert found["turns[0].tools.max_calls"][0] == "fail"
    assert found["turns[1].tools.required[0]"] == (
        "incomplete",
        "scenario observation failed: user turn 1 of 3 (turns[1]) was never sent: conversation stopped: expected at most 0 "
        "tool calls (turns[0].tools.max_calls), observed 1 at turn 1; no further request was sent",
    )
    assert found["tools.forbidden[0]"][0] == "incomplete"  # the whole conversation never happened: unknown, not a pass
    assert code == 1


# --- the contract ---------------------------------------------------------------------------------


def problems(text: str) -> list[tuple[str, int | None]]:
    with pytest.raises(ContractError) as caught:
        contract(text)
    return [(p.text, p.line) for p in caught.value.problems]


def test_every_turns_problem_is_reported_at_its_line() -> None:
    text = """\
version: 2
agent: {model: m}
scenarios:
  - id: a
    prompt: hi
    turns: [{user: hi}]
    expect: {response: {contains: [x]}}
  - id: b
    max_turns: 2
    turns:
      - {user: hi, colour: red}
      - {expect: {response: {contains: [x]}}}
      - user: again
        expect: {latency: {max_ms: 5}, response: {contains: [y], judge: {expected: z}}}
    expect: {}
  - id: c
    turns: []
    expect: {response: {contains: [x]}}
"""
    assert problems(text) == [
        ("scenarios[0] takes prompt or turns (turns[0] is the first message), not both", 6),
        ("Unknown behavior contract key: scenarios[1].turns[0].colour", 11),
        ("scenarios[1].turns[1].user is required", 12),
        (
            "scenarios[1].turns[2].expect.latency is not judged per user turn (a turn's latency is not recorded): put it in the scenario's expect",
            14,
        ),
        (
            "scenarios[1].turns[2].expect.response.judge is not judged per user turn (the judge is asked about the "
            "conversation's final answer): put it in the scenario's expect",
            14,
        ),
        ("scenarios[2].turns must contain at least one user turn", 17),
    ]


def test_fewer_requests_than_user_turns_is_a_contract_error() -> None:
    text = "version: 2\nagent: {model: m}\nscenarios:\n  - id: a\n    turns: [{user: a}, {user: b}]\n    expect: {response: {contains: [x]}}\n"
    assert problems(text) == [
        (
            "scenarios[0].turns has 2 user turns but max_turns is 1: every user turn needs at least one request (and one more "
            "for each round of tool calls); set max_turns to at least 2",
            5,
        )
    ]


def test_version_1_knows_no_turns() -> None:
    text = "version: 1\nagent: {model: m}\nscenarios: [{id: s, prompt: p, turns: [{user: a}], expect: {response: {contains: [x]}}}]\n"
    assert ("Unknown behavior contract key: scenarios[0].turns", 3) in problems(text)


def test_the_documented_conversation_runs_as_documented_against_the_good_and_the_regressed_agent(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    documented = examples("contract.md")["user-turns"]
    assert ASK in documented and CHANGE in documented
    outcomes = []
    for model in ("good", "bad"):
        (tmp_path / "contract.yml").write_text(documented.replace("support-bot", model))
        code, report = _run(["contract.yml", "--endpoint", agent_url + ENDPOINTS["chat"]], capsys)
        outcomes.append((code, sorted(a for a, s, _ in _verdicts(report) if s != "pass")))
    assert outcomes == [
        (0, []),
        (1, ["tools.forbidden[0]", "turns[1].response.contains[0]", "turns[1].tools.forbidden[0]", "turns[1].tools.required[0]"]),
    ]


def test_the_stored_run_replays_and_show_and_the_html_report_give_the_conversation_turn_by_turn(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    hostile = CHANGE + " <script>alert(1)</script>"
    text = refund_contract("bad", "chat").replace(f'user: "{CHANGE}"', f'user: "{hostile}"')
    (tmp_path / "contract.yml").write_text(text)
    code = main(["test", "contract.yml", "--endpoint", agent_url + ENDPOINTS["chat"], "--html", "report.html"])
    capsys.readouterr()
    assert code == 1
    (run_dir,) = (tmp_path / ".behavegate" / "runs").iterdir()
    assert main(["replay", str(run_dir)]) == 0  # the stored evidence, user turns included, is whole and untouched
    assert capsys.readouterr().out.endswith(": valid\n")
    assert main(["show", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    turn_1 = shown[shown.index("    turn 1 (2 model requests):") : shown.index("    turn 2 (1 model request):")]
    assert turn_1.splitlines()[1:] == [
        "      user:",
        f"        | {hostile}",
        '      call 2. issue_refund {"order_id": "A-1"}',
        '           -> {"refunded": 40}',
        "      agent:",
        "        | Refunded $40 for order A-1.",
        "      finish_reason: stop",
    ]
    assert "FAIL turns[1].tools.forbidden[0] [line 24]" in shown
    html = (tmp_path / "report.html").read_text()
    assert "conversation, turn by turn" in html and "Refunded $40 for order A-1." in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_table_shows_beside_a_turns_failure_what_the_agent_said_and_called_in_that_turn(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(refund_contract("bad", "chat"))
    assert main(["test", "contract.yml", "--endpoint", agent_url + ENDPOINTS["chat"], "--no-artifacts"]) == 1
    table = capsys.readouterr().out
    contains = table[table.index("FAIL turns[1].response.contains[0]") :]
    assert contains.splitlines()[2] == '       response: "Refunded $40 for order A-1." (27 characters)'
    forbidden = table[table.index("FAIL turns[1].tools.forbidden[0]") :]
    assert forbidden.splitlines()[2] == "       called: issue_refund"


# --- a simulated user (opt-in) ------------------------------------------------------------------------


SIMULATED = """\
version: 2
agent:
  model: good
  missing_tool_calls: none
  tools:
    - {{name: lookup_order, description: d, parameters: {{type: object}}}}
    - {{name: cancel_order, description: d, parameters: {{type: object}}}}
    - {{name: issue_refund, description: d, parameters: {{type: object}}}}
judge: {{endpoint: "{judge}", model: user-sim}}
scenarios:
  - id: simulated
    prompt: "{ask}"
    max_turns: 8
    simulated_user: {{persona: A customer who hesitates, goal: Get order A-1 cancelled instead of refunded, max_turns: 3}}
    tool_results:
      - {{name: lookup_order, content: {{status: delivered}}}}
      - {{name: cancel_order, content: {{cancelled: true}}}}
      - {{name: issue_refund, content: {{refunded: 40}}}}
    expect:
      response: {{contains: [cancelled]}}
      tools: {{forbidden: [issue_refund], required: [cancel_order]}}
"""


def test_a_simulated_user_is_recorded_labelled_and_replayed_with_no_call_to_the_simulator(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    JUDGE.reset()
    JUDGE.script = [CHANGE, "DONE"]
    with serve(JUDGE) as judge_url:
        (tmp_path / "contract.yml").write_text(SIMULATED.format(judge=judge_url, ask=ASK))
        args = ["contract.yml", "--endpoint", agent_url + ENDPOINTS["chat"], "--judge-allow-contract-endpoint"]
        code, report = _run([*args, "--save-observations", "recorded.json"], capsys)
        asked = len(JUDGE.requests)
        offline_code, offline = _run(["contract.yml", "--observations", "recorded.json"], capsys)
        assert len(JUDGE.requests) == asked == 2  # its message, then DONE; the replay asked nothing
        assert main(["test", "contract.yml", "--observations", "recorded.json", "--no-artifacts"]) == 0
    assert (code, offline_code) == (0, 0) and _verdicts(offline) == _verdicts(report)
    went = report["scenarios"][0]["observation"]["conversation"]
    assert [(t.get("simulated", False), t["user"]) for t in went["user_turns"]] == [(False, ASK), (True, CHANGE)]
    assert went["simulator"] == {"model": "user-sim", "replies": [CHANGE, "DONE"], "ended": "done"}
    # The simulator saw its persona and goal, its own message as assistant, the agent's answers as user.
    last = JUDGE.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "assistant", "user", "assistant", "user"]
    assert "Get order A-1 cancelled instead of refunded" in last[0]["content"]
    assert last[-1]["content"] == "Done: order A-1 is cancelled."
    table = capsys.readouterr().out
    assert "Simulated users (an LLM played the user: non-deterministic): 1 attempts; simulator model: 'user-sim'" in table


def test_a_simulated_user_that_cannot_be_asked_leaves_the_conversation_incomplete(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    JUDGE.reset()
    JUDGE.script = [503]
    with serve(JUDGE) as judge_url:
        (tmp_path / "contract.yml").write_text(SIMULATED.format(judge=judge_url, ask=ASK))
        args = ["contract.yml", "--endpoint", agent_url + ENDPOINTS["chat"], "--judge-allow-contract-endpoint"]
        code, report = _run(args, capsys)
    found = {a: (s, m) for a, s, m in _verdicts(report)}
    assert found["tools.forbidden[0]"][0] == "incomplete"  # never a pass on a conversation that could not go on
    assert "the simulated user could not go on after user turn 0: " in found["tools.forbidden[0]"][1]
    assert code == 2


def test_an_in_process_agent_gets_the_same_user_turns_and_is_judged_turn_by_turn(tmp_path: Path) -> None:
    from behavegate.api import load_contract, run_callable

    (tmp_path / "contract.yml").write_text(refund_contract("bad", "chat"))

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        calls, text = decide(messages, "bad")
        message = {"role": "assistant", "content": text, "tool_calls": calls or None}
        return {"choices": [{"message": message, "finish_reason": "tool_calls" if calls else "stop"}]}

    report = run_callable(load_contract(tmp_path / "contract.yml"), agent)
    failed = sorted(v.assertion for v in report.results[0].verdicts if v.status != "pass")
    assert failed == [
        "tools.forbidden[0]",
        "turns[1].response.contains[0]",
        "turns[1].tools.forbidden[0]",
        "turns[1].tools.required[0]",
    ]


def test_shards_of_a_conversation_with_user_turns_merge_to_the_verdicts_of_one_run(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = refund_contract("bad", "chat").replace("  - id: changes-their-mind\n", "  - id: changes-their-mind\n    runs: 2\n")
    (tmp_path / "contract.yml").write_text(text)
    endpoint = ["--endpoint", agent_url + ENDPOINTS["chat"], "--no-artifacts"]
    whole_code, whole = _run(["contract.yml", *endpoint], capsys)
    for k in (1, 2):
        assert main(["test", "contract.yml", *endpoint, "--shard", f"{k}/2", "--report", f"s{k}.json"]) == 0
    capsys.readouterr()
    code = main(["merge", "s1.json", "s2.json", "--no-artifacts", "--format", "json"])
    merged = json.loads(capsys.readouterr().out)
    assert (code, _verdicts(merged)) == (whole_code, _verdicts(whole)) == (1, _verdicts(whole))


def test_what_a_turns_pii_check_caught_is_masked_in_every_turn_a_view_shows(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    RefundAgent.leak = "Write to jane.doe@example.org for the refund."
    try:
        text = refund_contract("good", "chat").replace("response: {contains: [refund]}", "safety: {pii: [email]}")
        (tmp_path / "contract.yml").write_text(text)
        code = main(["test", "contract.yml", "--endpoint", agent_url + ENDPOINTS["chat"], "--html", "r.html", "--no-artifacts"])
        table = capsys.readouterr().out
    finally:
        RefundAgent.leak = ""
    html = (tmp_path / "r.html").read_text()
    assert "Write to [REDACTED] for the refund." in html  # the turn is shown, masked
    assert code == 1 and "FAIL turns[0].safety.pii[0]" in table
    assert "jane.doe@example.org" not in html and "jane.doe@example.org" not in table
