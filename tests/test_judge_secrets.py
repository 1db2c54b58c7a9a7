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
from typing import Any
from urllib.parse import quote

import pytest
from fake_agent import FakeAgent, Request

from behavegate.cli import main

AGENT_TOKEN = "agent-secret-ABC/+=1"  # '/', '+' and '=' change under URL and JSON encodings
JUDGE_TOKEN = "judge-secret-XYZ/+=2"


def chat(content: str) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


def seen(fake: FakeAgent) -> list[tuple[str, bytes]]:
    """Every request, headers and body, as the server received it."""
    return [(request.head, request.body) for request in fake.requests]


def echoing_agent(request: Request) -> dict[str, Any]:
    """Answers with the request's own Authorization header, verbatim and URL-encoded."""
    auth = request.header("Authorization")
    return chat(f"Paris. token={auth} again={quote(auth, safe='')}")


class EchoingJudge:
    """A judge (or a gateway in front of it) that quotes its own Authorization header
    and the run's agent token in its reason."""

    verdict = "pass"

    def __call__(self, request: Request) -> dict[str, Any]:
        auth = request.header("Authorization")
        return chat(json.dumps({"verdict": self.verdict, "reason": f"seen {auth} and {AGENT_TOKEN}"}))


JUDGE = EchoingJudge()


@pytest.fixture
def fakes() -> Iterator[tuple[FakeAgent, FakeAgent]]:
    JUDGE.verdict = "pass"
    with FakeAgent(echoing_agent) as agent, FakeAgent(JUDGE) as judge:
        yield agent, judge


@pytest.fixture
def servers(fakes: tuple[FakeAgent, FakeAgent]) -> tuple[str, str]:
    return fakes[0].url, fakes[1].url


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
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    servers: tuple[str, str],
    fakes: tuple[FakeAgent, FakeAgent],
) -> None:
    code = run_with_tokens(tmp_path, monkeypatch, *servers, "--no-artifacts", "--save-observations", "obs.json")
    assert code == 0, capsys.readouterr()
    assert len(seen(fakes[1])) == 1 and len(seen(fakes[0])) == 1
    judge_headers, judge_body = seen(fakes[1])[0]
    assert f"Authorization: Bearer {JUDGE_TOKEN}" in judge_headers
    # The agent echoed its token; the judge was asked about the answer with it masked.
    assert all(form.encode() not in judge_body for form in forms(AGENT_TOKEN))
    question = json.loads(judge_body)["messages"][1]["content"]
    assert "Paris. token=Bearer [REDACTED] again=Bearer%20[REDACTED]" in question
    agent_headers, agent_body = seen(fakes[0])[0]
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
    JUDGE.verdict = "fail"  # a failing verdict's message (the judge's reason) is shown everywhere
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
