"""What a run says once instead of in every check: an agent that could not be reached."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Reply, Request, serve, sse_reply

from behavegate.cli import main

CONTRACT = """\
version: 2
agent: {model: m}
scenarios:
  - {id: a, prompt: hi, expect: {response: {contains: [x]}}}
  - {id: b, prompt: hi, expect: {response: {contains: [x]}}}
"""


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_agent_that_is_not_running_is_named_once_with_host_and_port_in_every_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(CONTRACT)
    port = closed_port()
    views = ["--report", "r.json", "--junit", "j.xml", "--summary", "s.md", "--html", "r.html", "--annotations"]
    code = main(["test", "contract.yml", "--endpoint", f"http://127.0.0.1:{port}/v1/chat/completions", "--no-artifacts", *views])
    out = capsys.readouterr().out
    said = f"could not reach the agent at 127.0.0.1:{port} in 2 of 2 attempts"
    assert code == 2 and out.count(said) == 2  # the table's note and the annotation: once each
    assert "is the agent running and listening there?" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert [said in note for note in report["behavegate"]["notes"]] == [True]
    checks = [a["message"] for s in report["scenarios"] for a in s["assertions"]]
    assert checks == ["scenario observation failed: agent endpoint request failed: ConnectionError"] * 2  # skylos's words
    for view in ("j.xml", "s.md", "r.html"):
        assert (tmp_path / view).read_text().count(said) == 1, view


def stream_no_calls(request: Request) -> Reply:
    """An OpenAI-style stream that answers with text and no tool-call delta (as most do)."""
    chunks = [
        {"choices": [{"delta": {"role": "assistant", "content": "Done."}, "finish_reason": None}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}]},
    ]
    return sse_reply("".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n")


STREAMED = """\
version: 2
agent: {model: m, stream: true%s}
scenarios:
  - {id: a, prompt: hi, expect: {tools: {forbidden: [issue_refund]}}}
  - {id: b, prompt: hi, expect: {tools: {forbidden: [issue_refund]}}}
"""


def test_a_stream_without_tool_call_deltas_is_calls_not_known_said_once_with_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "contract.yml").write_text(STREAMED % "")
    with serve(stream_no_calls) as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--no-artifacts", "--report", "r.json"])
        out = capsys.readouterr().out
        assert code == 2 and out.count("2 of 2 answers left out message.tool_calls, or streamed with no tool-call delta") == 1
        assert out.count("cannot tell 'no tool called'") == 1  # the reason once, not per check
        checks = [a["message"] for s in json.loads((tmp_path / "r.json").read_text())["scenarios"] for a in s["assertions"]]
        assert all("calls not known" in message for message in checks)
        (tmp_path / "contract.yml").write_text(STREAMED % ", missing_tool_calls: none")
        assert main(["test", "contract.yml", "--endpoint", url, "--no-artifacts"]) == 0
        assert "left out message.tool_calls" not in capsys.readouterr().out


def answer_no_calls(request: Request) -> dict[str, Any]:
    """A plain JSON answer with text and no tool-call list: Chat Completions and a custom agent at once."""
    return {"choices": [{"message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}], "output": "x"}


CUSTOM = """\
version: 2
agent:
  http: {request: {input: "{{prompt}}"}, response: {content: output, complete: true}}
scenarios:
  - {id: a, prompt: hi, expect: {tools: {forbidden: [issue_refund]}}}
"""


def test_the_left_out_tool_calls_note_is_said_only_for_chat_answers_of_scenarios_with_tool_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with serve(answer_no_calls) as url:
        (tmp_path / "contract.yml").write_text(CONTRACT)  # response checks only: no tool check left incomplete
        assert main(["test", "contract.yml", "--endpoint", url, "--no-artifacts"]) == 0
        assert "left out message.tool_calls" not in capsys.readouterr().out
        (tmp_path / "contract.yml").write_text(CUSTOM)  # agent.http: its check says why in its own words
        assert main(["test", "contract.yml", "--endpoint", url, "--no-artifacts"]) == 2
        out = capsys.readouterr().out
        assert "left out message.tool_calls" not in out and "maps no tool_calls" in out
