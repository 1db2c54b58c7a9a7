"""Live progress: a live line on a terminal, a line per attempt in CI logs (past 50,
only those that did not pass, and a count),
never agent text, and always the verdict the report gives (progress judges
nothing itself)."""

from __future__ import annotations

import io
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Request, serve

from behavegate.cli import main
from behavegate.github.console import Console
from behavegate.render.progress import Progress


def test_ci_logs_get_one_line_per_attempt_with_the_status_it_is_given() -> None:
    stream = io.StringIO()
    progress = Progress(2, Console(stream, stream, environ={}), 0.0, interactive=False)
    progress.attempt_done("s1", "pass", 0.5)
    progress.attempt_done("s1", "fail", 0.25)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines == ["behavegate: [1/2] s1: pass in 0.5s", "behavegate: [2/2] s1: fail in 0.2s"]


def test_a_long_ci_run_lists_its_first_attempts_then_only_those_that_did_not_pass_and_a_count_each_tenth() -> None:
    stream = io.StringIO()
    progress = Progress(1000, Console(stream, stream, environ={}), 0.0, interactive=False)
    for index in range(1000):
        progress.attempt_done(f"s{index}", "fail" if index == 500 else "pass", 0.1)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[:50] == [f"behavegate: [{i + 1}/1000] s{i}: pass in 0.1s" for i in range(50)]
    assert "behavegate: [501/1000] s500: fail in 0.1s" in lines
    counts = [line for line in lines if "counted, not listed" in line]
    assert [line.split("]")[0] for line in counts] == [f"behavegate: [{n}/1000" for n in range(100, 1001, 100)]
    assert "1 failing, 0 incomplete" in counts[-1] and len(lines) == 50 + 1 + 10


def test_a_terminal_gets_one_rewritten_line_and_a_final_newline() -> None:
    stream = io.StringIO()
    progress = Progress(2, Console(stream, stream, environ={}), 0.0, interactive=True)
    progress.attempt_done("s1", "pass", 0.5)
    progress.attempt_done("s1", "fail", 0.25)
    progress.finish()
    text = stream.getvalue()
    assert text.count("\r\x1b[2K") == 2 and text.endswith("\n")
    assert "[2/2] 1 failing, 0 incomplete" in text


def _calls_a_tool(request: Request) -> dict[str, Any]:
    """Calls a tool the contract offers: fine for known_only, which needs the
    contract's agent to judge (the bug: progress judged without it)."""
    call = {"id": "c1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1"}'}}
    return {"choices": [{"finish_reason": "tool_calls", "message": {"content": "", "tool_calls": [call]}}]}


@pytest.fixture
def agent_url() -> Iterator[str]:
    with serve(_calls_a_tool) as url:
        yield url


def test_progress_shows_the_final_verdict_of_a_version_2_known_only_run(
    agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(
        textwrap.dedent("""\
        version: 2
        agent:
          model: m
          tools:
            - name: lookup_order
              description: find an order
              parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
        scenarios:
          - id: looks-up
            prompt: where is A-1?
            runs: 3
            expect:
              tools: {known_only: true, arguments_valid: true, required: [{name: lookup_order}]}
        """)
    )
    monkeypatch.chdir(tmp_path)
    code = main(["test", "contract.yml", "--endpoint", agent_url, "--no-artifacts", "--format", "json"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    shown = re.findall(r"\[\d/3\] looks-up: (\w+)", captured.err)
    final = [attempt["status"] for attempt in report["scenarios"][0]["attempts"]]
    assert code == 0 and report["status"] == "pass"
    assert shown == final == ["pass", "pass", "pass"]
