"""The run's two bearer tokens and the judge, through real loopback servers: the agent's
token (``--auth-env``) never goes to the judge, even when the agent echoes it; the
judge's (``--judge-auth-env``) never goes to the agent; and neither shows in any view or
file, even when the judge's reply quotes them. An answer with the agent's token masked
still replays offline to the same verdict."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import pytest
from helpers import QuietHandler, loopback, send_json

from behavegate.cli import main

AGENT_TOKEN = "agent-secret-ABC/+=1"  # '/', '+' and '=' change under URL and JSON encodings
JUDGE_TOKEN = "judge-secret-XYZ/+=2"


def chat(content: str) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


class Seen(QuietHandler):
    """Records every request, headers and body, as the server received it."""

    requests: ClassVar[list[tuple[str, bytes]]]

    def received(self) -> bytes:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).requests.append((str(self.headers), body))
        return body


class EchoingAgent(Seen):
    """Answers with the request's own Authorization header, verbatim and URL-encoded."""

    requests: ClassVar[list[tuple[str, bytes]]] = []

    def do_POST(self) -> None:
        self.received()
        auth = self.headers.get("Authorization", "")
        send_json(self, chat(f"Paris. token={auth} again={quote(auth, safe='')}"))


class EchoingJudge(Seen):
    """A judge (or a gateway in front of it) that quotes its own Authorization header
    and the run's agent token in its reason."""

    requests: ClassVar[list[tuple[str, bytes]]] = []
    verdict: ClassVar[str] = "pass"

    def do_POST(self) -> None:
        self.received()
        auth = self.headers.get("Authorization", "")
        send_json(self, chat(json.dumps({"verdict": EchoingJudge.verdict, "reason": f"seen {auth} and {AGENT_TOKEN}"})))


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    EchoingAgent.requests, EchoingJudge.requests, EchoingJudge.verdict = [], [], "pass"
    with loopback(EchoingAgent) as agent, loopback(EchoingJudge) as judge:
        yield agent, judge


def forms(token: str) -> tuple[str, ...]:
    return (token, quote(token, safe=""), json.dumps(token)[1:-1])


def run_with_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, judge: str, *more: str) -> int:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AT", AGENT_TOKEN)
    monkeypatch.setenv("JT", JUDGE_TOKEN)
    (tmp_path / "c.yml").write_text(
        textwrap.dedent("""\
        version: 2
        agent: {model: agent-m}
        judge: {model: grader}
        scenarios:
          - id: capital
            prompt: What is the capital of France?
            expect: {response: {judge: {expected: Paris is the capital of France., votes: 1}}}
        """),
        encoding="utf-8",
    )
    return main(
        ["test", "c.yml", "--endpoint", agent, "--auth-env", "AT", "--judge-endpoint", judge, "--judge-auth-env", "JT", *more]
    )


def test_the_agents_token_is_never_sent_to_the_judge_and_the_judges_never_to_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], servers: tuple[str, str]
) -> None:
    code = run_with_tokens(tmp_path, monkeypatch, *servers, "--no-artifacts", "--save-observations", "obs.json")
    assert code == 0, capsys.readouterr()
    assert len(EchoingJudge.requests) == 1 and len(EchoingAgent.requests) == 1
    judge_headers, judge_body = EchoingJudge.requests[0]
    assert f"Authorization: Bearer {JUDGE_TOKEN}" in judge_headers
    # The agent echoed its token; the judge was asked about the answer with it masked.
    assert all(form.encode() not in judge_body for form in forms(AGENT_TOKEN))
    question = json.loads(judge_body)["messages"][1]["content"]
    assert "Paris. token=Bearer [REDACTED] again=Bearer%20[REDACTED]" in question
    agent_headers, agent_body = EchoingAgent.requests[0]
    assert f"Authorization: Bearer {AGENT_TOKEN}" in agent_headers
    assert all(form not in agent_headers + agent_body.decode() for form in forms(JUDGE_TOKEN))
    # The masked question is this check's question about the saved (masked) answer: it replays.
    capsys.readouterr()
    assert main(["test", "c.yml", "--observations", "obs.json", "--no-artifacts", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["scenarios"][0]["assertions"][0]["status"] == "pass"


def test_the_judges_token_is_redacted_like_the_agents_in_every_view_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], servers: tuple[str, str]
) -> None:
    outputs = (
        "--save-observations",
        "obs.json",
        "--report",
        "rep.json",
        "--junit",
        "j.xml",
        "--html",
        "r.html",
        "--sarif",
        "s.sarif",
        "--summary",
        "sum.md",
        "--github-output",
        "out.txt",
        "--annotations",
        "--verbose",
    )
    EchoingJudge.verdict = "fail"  # a failing verdict's message (the judge's reason) is shown everywhere
    code = run_with_tokens(tmp_path, monkeypatch, *servers, *outputs)
    printed = capsys.readouterr()
    assert code == 1, printed
    assert "[REDACTED]" in printed.out
    assert "[REDACTED]" in (tmp_path / "rep.json").read_text()  # the judge's reason is there, masked
    written = {path: path.read_bytes().decode("utf-8", "replace") for path in tmp_path.rglob("*") if path.is_file()}
    assert any(".behavegate" in str(path) for path in written)  # the run's artifacts were written
    for token in (JUDGE_TOKEN, AGENT_TOKEN):
        for form in forms(token):
            assert form not in printed.out + printed.err
            assert [path for path, text in written.items() if form in text and path.name != "c.yml"] == []
