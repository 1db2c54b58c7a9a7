"""The OpenAI Responses API as a second wire format (``agent.api: responses``, version 2):
the request, the answer mapped to the evidence of a Chat Completions answer, hostile
answers incomplete with a reason, and a real loopback agent through the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_agent import FakeAgent, serve
from fake_agent import function_call as call
from fake_agent import output_text as text
from fake_agent import response_message as message
from helpers import SCENARIOS, chat_or_stream, contract, responses_agent, run, verdicts

from behavegate.errors import ContractError
from behavegate.evidence.chat import EndpointError, normalize
from behavegate.evidence.responses import as_chat, build_request

RESPONSES = """version: 2
agent:
  model: m
  api: responses
  tools:
    - {name: lookup, description: d, parameters: {type: object}}
scenarios:
  - {id: s, prompt: hi, expect: {refusal: false}}
"""


def observed(raw: Any) -> Any:
    return normalize(as_chat(raw), "s")


def test_the_request_has_input_items_function_tools_and_max_output_tokens() -> None:
    parsed = contract(RESPONSES)
    request = build_request(parsed.agent, parsed.scenarios[0], 64)
    assert request["input"] == [{"role": "user", "content": "hi"}]
    assert request["max_output_tokens"] == 64 and "max_tokens" not in request and "messages" not in request
    assert request["tools"] == [{"type": "function", "name": "lookup", "description": "d", "parameters": {"type": "object"}}]


def test_completed_output_maps_to_content_tool_calls_and_refusal_as_finish_reason_does() -> None:
    answered = observed(
        {"status": "completed", "output": [{"type": "reasoning", "summary": []}, message(text("It "), text("shipped."))]}
    )
    assert (answered.response, answered.response_complete, answered.finish_reason) == ("It shipped.", True, "stop")
    assert answered.tool_calls == () and answered.refusal is False
    called = observed({"status": "completed", "output": [call("lookup", '{"order": "A-1"}')], "usage": {"total_tokens": 7}})
    assert called.finish_reason == "tool_calls" and called.tool_calls_complete is True
    assert [(c.name, c.arguments) for c in called.tool_calls or ()] == [("lookup", {"order": "A-1"})]
    assert called.total_tokens == 7
    refused = observed({"status": "completed", "output": [message({"type": "refusal", "refusal": "I can't help."})]})
    assert refused.refusal is True and refused.response is None


def test_incomplete_status_is_incomplete_evidence_as_length_is() -> None:
    cut = observed(
        {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [message(text("It sh"))]}
    )
    assert (cut.finish_reason, cut.response_complete, cut.tool_calls_complete) == ("length", False, False)
    filtered = observed({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []})
    assert filtered.finish_reason == "content_filter" and filtered.response_complete is False
    assert observed({"status": "incomplete", "output": []}).finish_reason == "incomplete"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ([], "must be an object"),
        ({"status": "completed"}, "requires an output list"),
        ({"status": "completed", "output": {"type": "message"}}, "requires an output list"),
        ({"output": []}, "requires a status"),
        ({"status": 1, "output": []}, "requires a status"),
        ({"status": "failed", "output": [], "error": None}, "status is 'failed'"),
        ({"status": "in_progress", "output": []}, "status is 'in_progress'"),
        ({"status": "completed", "output": [], "error": {"code": "server_error"}}, "reported an error"),
    ],
)
def test_an_answer_that_cannot_say_what_the_agent_did_is_an_endpoint_error(raw: Any, reason: str) -> None:
    with pytest.raises(EndpointError, match=reason):
        as_chat(raw)


def test_a_part_or_item_of_the_wrong_shape_breaks_only_its_own_evidence() -> None:
    bad_part = observed({"status": "completed", "output": [message({"type": "output_text", "text": 3}), call("lookup", "{}")]})
    assert bad_part.response is None and bad_part.response_complete is False
    assert bad_part.tool_calls_complete is True
    bad_call = observed({"status": "completed", "output": [message(text("ok")), call("not a name!", "{}")]})
    assert bad_call.response == "ok" and bad_call.tool_calls is None and bad_call.tool_calls_complete is False
    unknown = observed({"status": "completed", "output": [message(text("ok")), {"type": "web_search_call", "id": "w"}]})
    assert unknown.response_complete is True and unknown.tool_calls is None
    content_not_list = observed({"status": "completed", "output": [{"type": "message", "content": "ok"}]})
    assert content_not_list.response_complete is False and content_not_list.refusal is None


@pytest.mark.parametrize(
    ("text_", "message_"),
    [
        (RESPONSES.replace("api: responses", "api: grpc"), "agent.api must be one of"),
        (RESPONSES.replace("version: 2", "version: 1"), "agent.api"),
        (RESPONSES.replace("  api: responses\n", "  api: responses\n  stream: true\n"), "agent.stream is for api: chat"),
    ],
)
def test_agent_api_problems_name_path_and_line(text_: str, message_: str) -> None:
    with pytest.raises(ContractError) as error:
        contract(text_)
    assert any(message_ in p.text and p.line in {4, 5} for p in error.value.problems), error.value.problems


# --- a real loopback agent through the CLI -------------------------------------------------


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_a_responses_api_agent_gets_the_verdicts_of_the_same_agent_on_chat_completions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(chat_or_stream) as url:
        chat_code, chat = run(tmp_path, SCENARIOS.format(timeout=10, stream=""), url, capsys)
    with FakeAgent(responses_agent, "/v1/responses") as agent:
        code, report = run(tmp_path, SCENARIOS.format(timeout=10, stream="  api: responses\n"), agent.url, capsys)
    assert code == chat_code == 1
    assert verdicts(report) == verdicts(chat)
    assert [s["status"] for s in report["scenarios"]] == ["pass", "pass", "fail", "pass"]
    assert all("messages" not in r and r["max_output_tokens"] > 0 for r in agent.bodies)
    # The scripted tool result goes back as function_call_output, its function_call echoed before it.
    second = next(r for r in agent.bodies if r["input"][-1].get("type") == "function_call_output")
    assert second["input"][0] == {"role": "user", "content": "converses"}
    echoed, result = second["input"][-2:]
    assert echoed == call("lookup", '{"order": "B-2"}', "k1")
    assert result == {"type": "function_call_output", "call_id": "k1", "output": "shipped"}
    assert all(item.get("type") != "reasoning" for item in second["input"])


HOSTILE: dict[str, Any] = {
    "missing": {"status": "completed"},
    "failed": {"status": "failed", "output": [message(text("shipped"))], "error": {"code": "server_error"}},
    "typed": {"status": "completed", "output": [message(text("shipped")), "not an item"]},
}


def test_hostile_responses_answers_are_incomplete_with_a_reason_never_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = "".join(
        f"  - {{id: {key}, prompt: {key}, expect: {{response: {{contains: [shipped]}}, tools: {{max_calls: 0}}}}}}\n"
        for key in HOSTILE
    )
    text_ = f"version: 2\nagent:\n  model: m\n  api: responses\nscenarios:\n{scenarios}"
    with serve(lambda request: HOSTILE[request.json()["input"][-1]["content"]], "/v1/responses") as url:
        code, report = run(tmp_path, text_, url, capsys)
    assert code == 2
    assert [s["status"] for s in report["scenarios"]] == ["incomplete"] * 3
    messages = [" ".join(a["message"] for a in s["assertions"]) for s in report["scenarios"]]
    assert "requires an output list" in messages[0] and "status is 'failed'" in messages[1]
    assert all(a["status"] != "pass" for s in report["scenarios"][:2] for a in s["assertions"])
    # An item of no known type may be a tool the agent used: only the tool evidence is unobserved.
    typed = {a["assertion"]: a["status"] for a in report["scenarios"][2]["assertions"]}
    assert typed == {"response.contains[0]": "pass", "tools.max_calls": "incomplete"}


def test_an_in_process_agent_is_called_with_messages_whatever_the_endpoints_wire_format(tmp_path: Path) -> None:
    from behavegate.api import Reply, load_contract, run_callable

    (tmp_path / "contract.yml").write_text(RESPONSES.replace("{refusal: false}", "{response: {contains: [ok]}}"))
    seen: list[Any] = []

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        seen.append(messages)
        return Reply("ok")

    report = run_callable(load_contract(tmp_path / "contract.yml", root=tmp_path), agent)
    assert report.status == "pass" and seen == [[{"role": "user", "content": "hi"}]]
