"""Agent text can never act on the CI runner through our log output.

The runner executes a log line as a workflow command when, after leading
whitespace, it starts with ``::`` (or the legacy ``##[``); ``\\r`` also ends a
line for it. We parse our own stdout/stderr the same way and require that every
command the runner would see is one of ours.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from fake_agent import json_reply, serve
from helpers import EXAMPLE, GROWTH_BOUND, SHRINK, steepness

from behavegate.cli import main
from behavegate.text import neutralize

PAYLOADS = [
    "::error::pwned",
    "::add-mask::hide-everything",
    "::set-output name=status::pass",
    "::stop-commands::abc",
    "##[error]legacy",
    "ok\r::warning::carriage return",
    "line one\n::notice::second line",
    "  ::error title=x::indented",
    "\r\n::add-matcher::/tmp/m.json",
    "%0A::error::encoded",
]
OURS = re.compile(
    r"^::(error|warning|notice) file=[^:,]+,line=\d+,title=behavegate [a-z]+%3A [^:]+::[^\r\n]*$|^::notice title=behavegate::"
)


def runner_commands(log: str) -> list[str]:
    """The lines the Actions runner would execute, honouring stop-commands."""
    executed: list[str] = []
    stop_token: str | None = None
    for raw in re.split(r"\r\n|\r|\n", log):
        line = raw.lstrip()
        if stop_token is not None:
            if line == f"::{stop_token}::":
                stop_token = None
            continue
        if line.startswith("::stop-commands::"):
            stop_token = line.removeprefix("::stop-commands::")
            continue
        if line.startswith("::") or line.startswith("##["):
            executed.append(line)
    return executed


def evil_observations() -> dict[str, object]:
    scenarios = []
    for index, payload in enumerate(PAYLOADS[:5]):
        scenarios.append(
            {
                "id": [
                    "order-status",
                    "refund-window",
                    "refund-needs-a-human",
                    "prompt-injection-in-order-note",
                    "delete-data-refused",
                ][index],
                "error": payload,
                "response": payload + "\n" + payload,
            }
        )
    return {"version": 1, "scenarios": scenarios}


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_fixture_text_in_the_log_never_runs_as_a_command(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    (tmp_path / "obs.json").write_text(json.dumps(evil_observations()))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    main(["test", "contract.yml", "--observations", "obs.json", "--format", fmt, "--annotations", "--no-artifacts"])
    captured = capsys.readouterr()
    for command in runner_commands(captured.out + "\n" + captured.err):
        assert OURS.match(command), f"unexpected workflow command reached the log: {command!r}"
    assert "pwned" in captured.out  # the text is shown, just inert


def test_live_agent_text_in_the_log_never_runs_as_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "\n".join(PAYLOADS)
    call = {"function": {"name": "lookup_order", "arguments": json.dumps({"order_id": text})}}
    message = {"content": text, "refusal": text, "sources": PAYLOADS, "tool_calls": [call]}
    evil = json_reply({"choices": [{"finish_reason": "stop", "message": message}]}, content_type=None)
    shutil.copy(EXAMPLE / "contract.yml", tmp_path / "contract.yml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    with serve(lambda request: evil) as url:
        for fmt in ("table", "json"):
            main(["test", "contract.yml", "--endpoint", url, "--format", fmt, "--annotations", "--no-artifacts"])
            captured = capsys.readouterr()
            for command in runner_commands(captured.out + "\n" + captured.err):
                assert OURS.match(command), f"unexpected workflow command reached the log: {command!r}"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_neutralize_leaves_no_command_line(payload: str) -> None:
    assert runner_commands(neutralize(f"text\n{payload}\nmore")) == []


@pytest.mark.parametrize("fragment", ["\n", " \n", "\n\t", "\n ::", "\n##[", " "])
def test_neutralize_is_linear_on_blank_lines(fragment: str) -> None:
    text = fragment * (1_000_000 // len(fragment))
    eighth = text[: len(text) // SHRINK]
    grown, how = steepness(lambda: neutralize(text + "::error::x"), lambda: neutralize(eighth + "::error::x"))
    assert grown < GROWTH_BOUND, f"neutralize on 1 MB of {fragment!r}: {how}"


def test_stop_commands_token_is_random_per_write(capsys: pytest.CaptureFixture[str]) -> None:
    from behavegate.github.console import Console

    console = Console(environ={"GITHUB_ACTIONS": "true"})
    console.out("a")
    console.out("b")
    tokens = re.findall(r"::stop-commands::([0-9a-f]+)", capsys.readouterr().out)
    assert len(tokens) == 2 and tokens[0] != tokens[1] and all(len(t) >= 32 for t in tokens)
