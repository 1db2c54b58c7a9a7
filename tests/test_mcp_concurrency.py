"""8 attempts in flight at once, each with its own MCP URL: every call is bound to its own
attempt. Each scenario's agent calls with arguments unique to it and is judged on them, so a
mix (an attempt's calls landing on another's path) flips verdicts: the rotated agent shows it.
Real loopback, no network."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fake_agent import Answer, Request, serve
from mcp_agents import run_tools

from behavegate.cli import main

N = 8
HEAD = """version: 2
agent:
  mcp: {serve: true}
  http:
    request: {input: "{{prompt}}", mcp: "{{mcp_url}}"}
    response: {content: output, complete: true}
  tools:
    - name: lookup_order
      description: Look an order up.
      parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
scenarios:
"""
SCENARIO = """  - id: order-{k}
    prompt: O-{k}
    tool_results:
      - {{name: lookup_order, arguments: {{order_id: O-{k}}}, content: {{status: status-{k}}}}}
      - {{default: {{error: not this attempt's order}}}}
    expect:
      response: {{contains: [status-{k}], uses_tool_result: [{{tool: lookup_order, field: status}}]}}
      tools:
        sequence: {{mode: exact, calls: [{{name: lookup_order, arguments: {{order_id: O-{k}}}}}]}}
        no_errors: true
"""
CONTRACT = HEAD + "".join(SCENARIO.format(k=k) for k in range(N))


def agent(rotate: int) -> Answer:
    """Waits until all N attempts are in flight, then looks its order up on the MCP URL of the
    attempt ``rotate`` places on (0: its own), answering with what the tool returned."""
    arrived: list[str] = []
    lock = threading.Lock()
    everyone = threading.Barrier(N, timeout=20)  # all in flight before any call
    called = threading.Barrier(N, timeout=20)  # all calls made before any answer (which closes its path)

    def answer(request: Request) -> dict[str, str]:
        body = request.json()
        with lock:
            arrived.append(body["mcp"])
            mine = len(arrived) - 1
        everyone.wait()
        url = arrived[(mine + rotate) % N]
        (text,) = run_tools(url, [("lookup_order", {"order_id": body["input"]})])
        called.wait()
        return {"output": f"{body['input']}: {text}"}

    return answer


@pytest.mark.parametrize(("rotate", "status", "code"), [(0, "pass", 0), (1, "fail", 1)])
def test_eight_concurrent_attempts_each_keep_only_their_own_calls_and_a_mix_would_fail(
    rotate: int, status: str, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONTRACT)
    with serve(agent(rotate), "/run") as url:
        args = ["test", "contract.yml", "--endpoint", url, "--concurrency", str(N), "--no-artifacts", "--report", "r.json"]
        exit_code = main(args)
    capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text())
    assert {s["id"]: s["status"] for s in report["scenarios"]} == {f"order-{k}": status for k in range(N)}
    for scenario in report["scenarios"]:
        k = scenario["id"].removeprefix("order-")
        (call,) = scenario["observation"]["tool_calls"]  # one call each, wherever it came from
        # Own path: its own order. Rotated: the neighbour's order, answered by this scenario's
        # default error, so every check that reads the calls fails.
        assert (call["arguments"]["order_id"] == f"O-{k}") is (rotate == 0)
    assert exit_code == code
