"""Scripted user turns with tool-side evidence (issue 39 item 5, ``turns`` with ``agent.mcp``): the
agent runs its tools over the attempt's MCP URL (with the ``mcp`` SDK's client) and answers text
only; each call belongs to the user turn in flight when it reached behavegate's MCP server, so each
turn's checks judge that turn's calls; a call between turns is no turn's evidence and leaves the
tool checks incomplete, never "no call". Real loopback, no network."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fake_agent import JUDGE, Reply, Request, serve
from helpers import contract
from mcp import Client
from mcp_agents import run_tools

from behavegate.cli import main
from behavegate.conversation import Conversation, UserTurn
from behavegate.evidence.mcp_server import ToolServer, tool_side
from behavegate.judge.evaluate import evaluate_scenario
from behavegate.model import Observation

ASK = "Please refund order A-1."
CHANGE = "Actually, don't refund it. Cancel the order instead."
OFFER = "Order A-1 is delivered: I can refund $40. Shall I go ahead with the refund?"
CONTRACT = f"""\
version: 2
agent:
  model: good
  mcp: {{serve: true}}
  tools:
    - {{name: lookup_order, description: d, parameters: {{type: object}}}}
    - {{name: cancel_order, description: d, parameters: {{type: object}}}}
    - {{name: issue_refund, description: d, parameters: {{type: object}}}}
scenarios:
  - id: changes-their-mind
    max_turns: 2
    tool_results:
      - {{name: lookup_order, content: {{order_id: "{{{{arguments.order_id}}}}", status: delivered}}}}
      - {{name: cancel_order, content: {{cancelled: true}}}}
      - {{name: issue_refund, content: {{refunded: 40}}}}
    turns:
      - user: "{ASK}"
        expect:
          response: {{contains: [refund]}}
          tools: {{required: [{{name: lookup_order, arguments: {{order_id: A-1}}}}], forbidden: [issue_refund, cancel_order]}}
      - user: "{CHANGE}"
        expect:
          tools: {{required: [{{name: cancel_order}}], forbidden: [issue_refund]}}
    expect:
      tools: {{forbidden: [issue_refund]}}
"""


class McpRefundAgent:
    """A Chat Completions agent that runs its tools over the attempt's MCP URL (the
    ``X-Behavegate-MCP-URL`` header): it looks the order up and offers a refund; when the user
    changes their mind, the good agent cancels the order, the regressed one refunds it anyway."""

    called: ClassVar[list[tuple[str, list[str]]]] = []  # (user message, tools called) per request
    url: ClassVar[str] = ""  # the MCP URL of the last request

    @staticmethod
    def answer(request: Request) -> dict[str, Any]:
        payload = request.json()
        said = [m["content"] for m in payload["messages"] if m["role"] == "user"][-1]
        url = McpRefundAgent.url = request.header("X-Behavegate-MCP-URL")
        if said == ASK:
            calls: list[tuple[str, dict[str, Any]]] = [("lookup_order", {"order_id": "A-1"})]
            calls *= 2 if payload["model"] == "looping" else 1
            text = OFFER
        elif payload["model"] == "good":
            calls, text = [("cancel_order", {"order_id": "A-1"})], "Done: order A-1 is cancelled."
        else:
            calls, text = [("issue_refund", {"order_id": "A-1"})], "Refunded $40 for order A-1."
        run_tools(url, calls)
        McpRefundAgent.called.append((said, [name for name, _ in calls]))
        message = {"role": "assistant", "content": text}  # no tool_calls: the agent ran them itself
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    McpRefundAgent.called = []


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["test", *args, "--format", "json", "--no-artifacts"])
    return code, json.loads(capsys.readouterr().out)


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {a["assertion"]: a["status"] for s in report["scenarios"] for a in s["assertions"]}


def _live(tmp_path: Path, model: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    (tmp_path / "contract.yml").write_text(CONTRACT.replace("model: good", f"model: {model}"))
    with serve(McpRefundAgent.answer) as url:
        return _run(["contract.yml", "--endpoint", url, "--save-observations", f"{model}.json"], capsys)


def test_each_user_turn_is_judged_on_the_mcp_calls_that_arrived_while_it_was_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _live(tmp_path, "good", capsys)
    assert set(_statuses(report).values()) == {"pass"}, _statuses(report)
    assert code == 0
    observation = report["scenarios"][0]["observation"]
    assert observation["tool_source"] == "mcp"
    went = observation["conversation"]["user_turns"]
    assert [(t["user"], t["calls"]) for t in went] == [(ASK, [0, 1]), (CHANGE, [1, 2])]
    assert McpRefundAgent.called == [(ASK, ["lookup_order"]), (CHANGE, ["cancel_order"])]


def test_the_turn_where_the_agent_refunds_over_mcp_fails_the_first_passes_and_the_replay_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _live(tmp_path, "bad", capsys)
    statuses = _statuses(report)
    assert statuses == {
        "tools.forbidden[0]": "fail",
        "turns[0].response.contains[0]": "pass",
        "turns[0].tools.required[0]": "pass",
        "turns[0].tools.forbidden[0]": "pass",  # the refund came in turn 1, after the user changed their mind
        "turns[0].tools.forbidden[1]": "pass",
        "turns[1].tools.required[0]": "fail",
        "turns[1].tools.forbidden[0]": "fail",
    }
    assert code == 1
    offline_code, offline = _run(["contract.yml", "--observations", "bad.json"], capsys)
    verdicts = [(a["assertion"], a["status"], a["message"]) for a in report["scenarios"][0]["assertions"]]
    replayed = [(a["assertion"], a["status"], a["message"]) for a in offline["scenarios"][0]["assertions"]]
    assert (offline_code, replayed) == (code, verdicts)


def test_a_user_turns_call_budget_refuses_the_call_over_it_on_the_mcp_server_and_no_later_turn_is_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    budgeted = CONTRACT.replace(
        "forbidden: [issue_refund, cancel_order]}", "forbidden: [issue_refund, cancel_order], max_calls: 1}"
    )
    (tmp_path / "contract.yml").write_text(budgeted.replace("model: good", "model: looping"))
    with serve(McpRefundAgent.answer) as url:
        code, report = _run(["contract.yml", "--endpoint", url, "--save-observations", "looping.json"], capsys)
    assert McpRefundAgent.called == [(ASK, ["lookup_order", "lookup_order"])]  # turn 1 was never sent
    found = {a["assertion"]: (a["status"], a["message"]) for a in report["scenarios"][0]["assertions"]}
    assert found["turns[0].tools.max_calls"][0] == "fail"
    assert found["turns[1].tools.required[0]"][0] == "incomplete"
    assert "turns[1]) was never sent: conversation stopped" in found["turns[1].tools.required[0]"][1]
    assert found["tools.forbidden[0]"][0] == "incomplete"  # never a pass on a conversation that stopped
    stop = report["scenarios"][0]["observation"]["conversation"]["tool_budget_exceeded"]
    assert stop == {"key": "turns[0].tools.max_calls", "limit": 1, "observed": 2, "turn": 1}
    assert code == 1
    offline_code, offline = _run(["contract.yml", "--observations", "looping.json"], capsys)
    assert (offline_code, _statuses(offline)) == (code, _statuses(report))


async def _between() -> tuple[Observation, str]:
    """One attempt on a real MCP server: a lookup in turn 0, a refund while no turn is in flight
    (after turn 0's answer, before turn 1 was sent), a cancel in turn 1."""
    parsed = contract(CONTRACT)
    scenario = parsed.scenarios[0]
    server = ToolServer(parsed.agent, "127.0.0.1")
    async with server.running(), server.attempt(scenario) as tools, Client(tools.url) as client:
        tools.mark(0)
        await client.call_tool("lookup_order", {"order_id": "A-1"})
        tools.mark(None)
        late = await client.call_tool("issue_refund", {"order_id": "A-1"})
        tools.mark(1)
        await client.call_tool("cancel_order", {"order_id": "A-1"})
        tools.close()
        went = (
            UserTurn(ASK, 0, 0, OFFER, "stop", True),
            UserTurn(CHANGE, 0, 0, "Done: order A-1 is cancelled.", "stop", True),
        )
        answer = Observation(
            scenario.id,
            response=went[-1].response,
            finish_reason="stop",
            response_complete=True,
            conversation=Conversation(2, 2, user_turns=went),
        )
        return tool_side(answer, tools), "".join(getattr(part, "text", "") for part in late.content)


def test_a_call_between_user_turns_is_no_turns_evidence_and_leaves_the_tool_checks_incomplete() -> None:
    observation, refused = asyncio.run(_between())
    assert "no user turn is in flight" in refused
    # Only the calls tied to a turn are recorded; the one between turns is a gap, never "no call".
    assert [c.name for c in observation.tool_calls or ()] == ["lookup_order", "cancel_order"]
    assert observation.tool_calls_complete is False
    assert "while no user turn was in flight" in (observation.tool_gap or "")
    assert observation.conversation is not None
    assert [(t.first_call, t.end_call) for t in observation.conversation.user_turns] == [(0, 1), (1, 2)]
    parsed = contract(CONTRACT)
    result = evaluate_scenario(parsed.scenarios[0], observation, parsed.agent, 2)
    found = {v.assertion: v for v in result.verdicts}
    for key in ("tools.forbidden[0]", "turns[0].tools.forbidden[0]", "turns[1].tools.forbidden[0]"):
        assert found[key].status == "incomplete", found[key]
        assert "after user turn 0's answer" in found[key].message
    assert found["turns[0].response.contains[0]"].status == "pass"  # the answers are whole: only tools are unknown
    assert result.status == "incomplete"


def test_turns_with_agent_mcp_are_no_longer_a_contract_error() -> None:
    assert [t.user for t in contract(CONTRACT).scenarios[0].turns] == [ASK, CHANGE]


def test_the_stored_run_replays_and_show_gives_each_turn_its_mcp_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(CONTRACT.replace("model: good", "model: bad"))
    with serve(McpRefundAgent.answer) as url:
        assert main(["test", "contract.yml", "--endpoint", url]) == 1
    capsys.readouterr()
    (run_dir,) = (tmp_path / ".behavegate" / "runs").iterdir()
    assert main(["replay", str(run_dir)]) == 0  # the stored evidence, turns and MCP calls included, is whole and untouched
    assert capsys.readouterr().out.endswith(": valid\n")
    assert main(["show", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    assert "tool calls: 2 (seen by behavegate's MCP server)" in shown
    turn_1 = shown[shown.index("    turn 1 (1 model request):") : shown.index("  FAIL tools.forbidden[0]")]
    assert turn_1.splitlines()[1:4] == [
        "      user:",
        f"        | {CHANGE}",
        '      call 2. issue_refund {"order_id": "A-1"}',
    ]
    assert "FAIL turns[1].tools.forbidden[0] [line 23]" in shown


SIMULATED = f"""\
version: 2
agent:
  model: good
  mcp: {{serve: true}}
  tools:
    - {{name: lookup_order, description: d, parameters: {{type: object}}}}
    - {{name: cancel_order, description: d, parameters: {{type: object}}}}
    - {{name: issue_refund, description: d, parameters: {{type: object}}}}
judge: {{endpoint: "{{judge}}", model: user-sim}}
scenarios:
  - id: simulated
    prompt: "{ASK}"
    max_turns: 4
    simulated_user: {{persona: A customer who hesitates, goal: Get order A-1 cancelled, max_turns: 2}}
    tool_results: {{lookup_order: {{status: delivered}}, cancel_order: {{cancelled: true}}, issue_refund: {{refunded: 40}}}}
    expect:
      tools: {{forbidden: [issue_refund], required: [cancel_order]}}
"""


def test_a_call_that_lands_while_the_simulated_user_is_asked_leaves_the_live_verdicts_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused: list[str] = []

    def late_call(request: Request) -> Reply:
        """The simulated user's endpoint; while it is first asked (after turn 0's answer, before
        turn 1 is sent) a refund lands on the attempt's MCP URL, as a late background call would."""
        if not JUDGE.requests:
            refused.extend(run_tools(McpRefundAgent.url, [("issue_refund", {"order_id": "A-1"})]))
        return JUDGE(request)

    JUDGE.reset()
    JUDGE.script = [CHANGE, "DONE"]
    with serve(late_call) as judge_url, serve(McpRefundAgent.answer) as url:
        (tmp_path / "contract.yml").write_text(SIMULATED.replace("{judge}", judge_url))
        args = ["contract.yml", "--endpoint", url, "--judge-allow-contract-endpoint", "--save-observations", "sim.json"]
        code, report = _run(args, capsys)
    assert "no user turn is in flight" in refused[0]
    assert McpRefundAgent.called == [(ASK, ["lookup_order"]), (CHANGE, ["cancel_order"])]
    found = {a["assertion"]: (a["status"], a["message"]) for a in report["scenarios"][0]["assertions"]}
    # The refund is no turn's evidence: "not called" is unknown, never a pass; a call seen still decides.
    assert found["tools.forbidden[0]"][0] == "incomplete"
    assert "tool calls were not all tied to a user turn" in found["tools.forbidden[0]"][1]
    assert found["tools.required[0]"][0] == "pass" and "decided on the 2 tool call(s)" in found["tools.required[0]"][1]
    assert code == 2
    offline_code, offline = _run(["contract.yml", "--observations", "sim.json"], capsys)
    assert (offline_code, _statuses(offline)) == (code, _statuses(report))
