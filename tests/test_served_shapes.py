"""One agent's behaviour served in every shape teams serve agents in (plain Chat Completions,
a stream with split tool-call arguments, the Responses API, a custom JSON API, a server that
answers 429 twice before each answer) gives the same verdicts through the Action as
through the CLI, with the workflow's inputs only."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from fake_agent import Answer, Reply, Request, empty_reply, json_reply, serve
from helpers import CUSTOM_SCENARIOS, REPLIES, SCENARIOS, chat_or_stream, custom_agent, responses_agent, run, verdicts

from behavegate.github import action


class BusyChat:
    """Chat Completions, but every request is answered 429 (Retry-After: 0) twice first."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        key = request.prompt
        with self.lock:
            self.seen[key] = count = self.seen.get(key, 0) + 1
        return empty_reply(429, Retry_After="0") if count % 3 else json_reply(REPLIES[key])


BUSY = BusyChat()
PLAIN = SCENARIOS.format(timeout=10, stream="")
# (agent, its path, the contract, the workflow's extra inputs)
SHAPES: dict[str, tuple[Answer, str, str, dict[str, str]]] = {
    "stream": (chat_or_stream, "/v1/chat/completions", SCENARIOS.format(timeout=10, stream="  stream: true\n"), {}),
    "responses": (responses_agent, "/v1/responses", SCENARIOS.format(timeout=10, stream="  api: responses\n"), {}),
    "custom": (custom_agent, "/chat", CUSTOM_SCENARIOS, {}),
    "busy": (BUSY, "/v1/chat/completions", PLAIN, {"retries": "2"}),
}


def through_action(workspace: Path, text: str, url: str, **inputs: str) -> tuple[int, dict[str, Any]]:
    (workspace / "contract.yml").write_text(text)
    environ = {"GITHUB_WORKSPACE": str(workspace), "INPUT_CONTRACT": "contract.yml", "INPUT_ENDPOINT": url}
    environ.update({"INPUT_ARTIFACTS": "false", **{f"INPUT_{name.upper()}": value for name, value in inputs.items()}})
    code = action.main(environ)
    return code, json.loads((workspace / "behavegate-report.json").read_text())


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, list[Any]]:
    with serve(chat_or_stream) as url:
        code, report = through_action(tmp_path_factory.mktemp("plain"), PLAIN, url)
    return code, verdicts(report)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shape_gets_the_verdicts_of_plain_chat_completions_through_the_cli_and_the_action(
    shape: str, plain: tuple[int, list[Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, path, text, inputs = SHAPES[shape]
    BUSY.seen.clear()
    with serve(answer, path) as url:
        code, report = through_action(tmp_path, text, url, **inputs)
        capsys.readouterr()
        BUSY.seen.clear()
        cli_code, cli = run(tmp_path, text, url, capsys, *(f"--{k}={v}" for k, v in inputs.items()))
    assert (code, verdicts(report)) == plain == (cli_code, verdicts(cli))
    assert [s["status"] for s in report["scenarios"]] == ["pass", "pass", "fail", "pass"]
    if shape == "busy":  # retried, and visibly so
        retried = [a["observation"].get("retries") for s in report["scenarios"] for a in s["attempts"]]
        assert all(r and {x["reason"] for x in r} == {"HTTP 429"} for r in retried), retried
    capsys.readouterr()
