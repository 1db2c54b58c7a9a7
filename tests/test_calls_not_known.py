"""Unknown is never zero: a step that asked for tools whose calls cannot be read leaves the tool
checks incomplete ("calls not known") in every reader, and the calls that could be read still
settle what they settle (a forbidden call seen fails, a required call matched passes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import contract

from behavegate.cli import main
from behavegate.evidence import responses
from behavegate.evidence.chat import normalize
from behavegate.evidence.chat_stream import Assembly
from behavegate.evidence.http_agent import read
from behavegate.frozen import replace
from behavegate.judge.evaluate import evaluate_scenario
from behavegate.model import Observation, ToolCall

CONTRACT = contract("""\
version: 2
agent:
  tools:
    - {name: lookup_order, description: d, parameters: {type: object}}
    - {name: issue_refund, description: d, parameters: {type: object}}
scenarios:
  - id: s
    prompt: Refund order A-1.
    expect:
      tools:
        forbidden: [issue_refund]
        required: [{name: lookup_order}]
        max_calls: 5
        sequence: {mode: exact, calls: [lookup_order]}
""")
SCENARIO = CONTRACT.scenarios[0]


def statuses(observation: Observation) -> dict[str, str]:
    result = evaluate_scenario(SCENARIO, observation, CONTRACT.agent, 2)
    return {v.assertion: v.status for v in result.verdicts}


NOT_KNOWN = {
    "tools.forbidden[0]": "incomplete",
    "tools.required[0]": "incomplete",
    "tools.max_calls": "incomplete",
    "tools.sequence": "incomplete",
}


def chat(message: dict[str, Any], finish: str = "tool_calls") -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": None, **message}, "finish_reason": finish}]}


def streamed(deltas: list[dict[str, Any]], finish: str) -> dict[str, Any]:
    assembly = Assembly()
    chunks: list[dict[str, Any]] = [{"choices": [{"delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append({"choices": [{"delta": {}, "finish_reason": finish}]})
    assembly.feed("".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n")
    return assembly.finish()


HTTP = contract("""\
version: 2
agent:
  http:
    request: {input: "{{prompt}}"}
    response: {content: output, tool_calls: {path: calls, name: name}, complete: status}
scenarios:
  - {id: s, prompt: p, expect: {tools: {forbidden: [issue_refund]}}}
""")


@pytest.mark.parametrize(
    "observation",
    [
        pytest.param(normalize(chat({}), "s"), id="chat: finish tool_calls, no tool_calls key"),
        pytest.param(normalize(chat({"tool_calls": []}), "s"), id="chat: finish tool_calls, an empty list"),
        pytest.param(normalize(chat({"tool_calls": None}), "s"), id="chat: finish tool_calls, null"),
        pytest.param(normalize(streamed([{"role": "assistant"}], "tool_calls"), "s"), id="stream: no tool-call delta"),
        pytest.param(normalize(streamed([{"content": "ok"}], "stop"), "s"), id="stream: stop, no tool-call delta"),
        pytest.param(
            normalize(responses.as_chat({"status": "completed", "output": [{"type": "mcp_call", "name": "x"}]}), "s"),
            id="responses: an output item that is a call it cannot read",
        ),
        pytest.param(read({"output": "x", "status": "tool_calls"}, HTTP.agent, "s", 1)[0], id="agent.http: no calls list"),
    ],
)
def test_a_step_that_asked_for_tools_it_cannot_show_leaves_the_calls_not_known(observation: Observation) -> None:
    assert statuses(observation) == NOT_KNOWN


def test_an_observation_file_with_finish_tool_calls_and_no_calls_is_calls_not_known() -> None:
    observation = Observation(
        "s", response=None, response_complete=False, finish_reason="tool_calls", tool_calls=(), tool_calls_complete=True
    )
    assert statuses(observation) == NOT_KNOWN


def test_the_calls_that_could_be_read_settle_what_they_settle_and_nothing_else() -> None:
    partial = Observation(
        "s",
        response="Refunded.",
        response_complete=True,
        finish_reason="stop",
        tool_calls=(ToolCall("lookup_order"), ToolCall("issue_refund")),
        tool_calls_complete=False,
    )
    result = evaluate_scenario(SCENARIO, partial, CONTRACT.agent, 2)
    found = {v.assertion: v for v in result.verdicts}
    assert {key: v.status for key, v in found.items()} == {
        "tools.forbidden[0]": "fail",  # seen: more calls cannot undo it
        "tools.required[0]": "pass",  # matched
        "tools.max_calls": "incomplete",  # 2 of at most 5 seen: more may have run
        "tools.sequence": "incomplete",  # an exact sequence needs every call
    }
    assert "decided on the 2 tool call(s) that could be read" in found["tools.forbidden[0]"].message
    # Version 1 keeps skylos's verdicts: incomplete evidence decides nothing.
    v1 = evaluate_scenario(SCENARIO, partial, CONTRACT.agent, 1)
    assert {v.status for v in v1.verdicts} == {"incomplete"}


# --- traces: a model step that ended asking for tools, its calls in no attribute behavegate reads --------


def _attr(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value} if isinstance(value, str) else {"intValue": str(value)}}


ASKED = {
    "genai-latest": [
        _attr("gen_ai.operation.name", "chat"),
        _attr("gen_ai.response.finish_reasons", '["tool_calls"]'),
        _attr("gen_ai.output.messages", '[{"role": "assistant", "parts": [], "finish_reason": "tool_calls"}]'),
    ],
    "openllmetry": [
        _attr("llm.request.type", "chat"),
        _attr("gen_ai.completion.0.role", "assistant"),
        _attr("gen_ai.completion.0.content", ""),
        _attr("gen_ai.completion.0.finish_reason", "tool_calls"),
    ],
    "openinference": [
        _attr("openinference.span.kind", "LLM"),
        _attr("llm.finish_reason", "tool_calls"),
        _attr("llm.output_messages.0.message.role", "assistant"),
        _attr("llm.output_messages.0.message.content", ""),
    ],
}


def judge_one_span(
    attributes: list[dict[str, Any]], expect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    """One model span (bound to scenario s) as an OTLP JSON file, judged: the first verdict."""
    span = {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "name": "step",
        "kind": 3,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [*attributes, _attr("behavegate.scenario.id", "s")],
    }
    document = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [span]}]}]}
    (tmp_path / "trace.json").write_text(json.dumps(document))
    (tmp_path / "contract.yml").write_text(f"version: 2\nagent: {{}}\nscenarios:\n  - {{id: s, prompt: p, expect: {expect}}}\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)  # paths are read from the project root
        main(["test", "contract.yml", "--traces", "trace.json", "--no-artifacts", "--format", "json"])
    verdict: dict[str, Any] = json.loads(capsys.readouterr().out)["scenarios"][0]["assertions"][0]
    return verdict


@pytest.mark.parametrize("dialect", list(ASKED))
def test_a_trace_step_that_asked_for_tools_it_does_not_show_leaves_the_calls_not_known(
    dialect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verdict = judge_one_span(ASKED[dialect], "{tools: {forbidden: [issue_refund]}}", tmp_path, capsys)
    assert verdict["status"] == "incomplete" and verdict["message"].startswith("calls not known"), verdict["message"]


def test_a_streamed_openinference_answer_kept_only_in_output_value_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    response = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Order A-1 has shipped."}, "finish_reason": "stop"}]
    }
    attributes = [_attr("openinference.span.kind", "LLM"), _attr("output.value", json.dumps(response))]
    verdict = judge_one_span(attributes, "{response: {contains: [shipped]}}", tmp_path, capsys)
    assert verdict["status"] == "pass", verdict["message"]


def test_a_count_with_min_and_max_short_of_min_on_the_calls_read_stays_incomplete() -> None:
    counted = contract("""\
version: 2
agent:
  tools:
    - {name: lookup_order, description: d, parameters: {type: object}}
scenarios:
  - id: s
    prompt: p
    expect:
      tools:
        calls: {lookup_order: {min: 2, max: 3}}
  - id: t
    prompt: p
    expect:
      tools:
        calls: {lookup_order: {max: 1}}
""")
    partial = Observation(
        "s",
        response=None,
        response_complete=False,
        finish_reason="length",
        tool_calls=(ToolCall("lookup_order"), ToolCall("lookup_order")),
        tool_calls_complete=False,
    )
    short = replace(partial, tool_calls=(ToolCall("lookup_order"),))
    # One of at least two read, the rest not known: more calls may have reached the minimum.
    assert [v.status for v in evaluate_scenario(counted.scenarios[0], short, counted.agent, 2).verdicts] == ["incomplete"]
    # Two read against at most one: more calls cannot undo it.
    assert [v.status for v in evaluate_scenario(counted.scenarios[1], partial, counted.agent, 2).verdicts] == ["fail"]


VALID = contract("""\
version: 2
agent:
  tools:
    - {name: lookup_order, description: d, parameters: {type: object, required: [order_id]}}
scenarios:
  - {id: s, prompt: p, expect: {tools: {arguments_valid: true}}}
""")


def test_arguments_cut_short_with_the_answer_are_not_observed_never_invalid() -> None:
    """finish_reason length: the call was read, its arguments were not (a hostile review's wrong fail)."""
    cut = Observation(
        "s",
        response=None,
        response_complete=False,
        finish_reason="length",
        tool_calls=(ToolCall("lookup_order", None),),
        tool_calls_complete=False,
    )
    verdict = evaluate_scenario(VALID.scenarios[0], cut, VALID.agent, 2).verdicts[0]
    assert verdict.status == "incomplete"


def test_arguments_an_agent_http_mapping_does_not_reach_are_not_observed_never_invalid() -> None:
    mapped = contract("""\
version: 2
agent:
  http:
    request: {input: "{{prompt}}"}
    response: {content: output, tool_calls: {path: calls, name: name}, complete: true}
  tools:
    - {name: lookup_order, description: d, parameters: {type: object, required: [order_id]}}
scenarios:
  - {id: s, prompt: p, expect: {tools: {arguments_valid: true}}}
""")
    observation = read({"output": "x", "calls": [{"name": "lookup_order"}]}, mapped.agent, "s", 1)[0]
    verdict = evaluate_scenario(mapped.scenarios[0], observation, mapped.agent, 2).verdicts[0]
    assert verdict.status == "incomplete" and "were not observed" in verdict.message


def test_a_call_that_openinference_lists_only_in_output_value_is_a_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A span whose output messages leave out a call its output.value lists (a hostile review's false pass)."""
    response = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "Done.",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "issue_refund", "arguments": "{}"}}],
                },
                "finish_reason": "stop",
            }
        ]
    }
    attributes = [
        _attr("openinference.span.kind", "LLM"),
        _attr("llm.output_messages.0.message.role", "assistant"),
        _attr("llm.output_messages.0.message.content", "Done."),
        _attr("output.value", json.dumps(response)),
    ]
    verdict = judge_one_span(attributes, "{tools: {forbidden: [issue_refund]}}", tmp_path, capsys)
    assert verdict["status"] == "fail", verdict["message"]
