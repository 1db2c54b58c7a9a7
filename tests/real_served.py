"""Replays the served-agent fixtures recorded from real software (scripts/real_software/served.py).

A :class:`Replay` serves one (source, route) on loopback: each request is answered with the raw
response bytes recorded for its scenario and turn, exactly as the real server wrote them. The
scenario is the one whose prompt the request carries; the turn is one more than the assistant
turns the request carries (Chat Completions: assistant messages; Responses API: runs of
function_call_output items; a custom JSON API is asked once)."""

from __future__ import annotations

import contextlib
import io
import json
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_agent import RawServer

from behavegate.cli import main

SERVED = Path(__file__).parent / "fixtures" / "real" / "served"
CONTRACTS = SERVED / "contracts"

# contract name -> (source, route folder, endpoint path)
ROUTES: dict[str, tuple[str, str, str]] = {
    "litellm-chat": ("litellm", "chat", "/v1/chat/completions"),
    "litellm-chat-stream": ("litellm", "chat-stream", "/v1/chat/completions"),
    "litellm-responses": ("litellm", "responses", "/v1/responses"),
    "pydantic-ai-chat": ("pydantic-ai", "chat", "/v1/chat/completions"),
    "pydantic-ai-run": ("pydantic-ai", "run", "/run"),
    "pydantic-ai-steps": ("pydantic-ai", "steps", "/run-steps"),
    "openai-agents-chat": ("openai-agents", "chat", "/v1/chat/completions"),
    "openai-agents-run": ("openai-agents", "run", "/run"),
    "openai-agents-steps": ("openai-agents", "steps", "/run-steps"),
}


@dataclass(frozen=True)
class Recording:
    scenario: str
    turn: int
    response: bytes


def index() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((SERVED / "index.json").read_text())["fixtures"]
    return entries


def recordings(source: str, route: str) -> tuple[dict[str, str], dict[tuple[str, int], Recording]]:
    """(scenario -> its prompt, (scenario, turn) -> the recorded response) of one route."""
    prompts: dict[str, str] = {}
    recorded: dict[tuple[str, int], Recording] = {}
    for entry in index():
        if (entry["source"], entry["route"]) != (source, route):
            continue
        if entry["turn"] == 1:
            prompts[entry["scenario"]] = prompt_of(json.loads((SERVED / entry["request"]).read_text()))
        response = (SERVED / entry["response"]).read_bytes()
        recorded[entry["scenario"], entry["turn"]] = Recording(entry["scenario"], entry["turn"], response)
    return prompts, recorded


def prompt_of(request: dict[str, Any]) -> str:
    """The user's prompt in a recorded first request: the one user message or the input text."""
    if isinstance(request.get("input"), str):
        return str(request["input"])
    items: list[dict[str, Any]] = request.get("messages") or request["input"]
    return str(items[0]["content"])


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def turn_of(request: dict[str, Any]) -> int:
    if isinstance(request.get("messages"), list):
        return 1 + sum(1 for m in request["messages"] if isinstance(m, dict) and m.get("role") == "assistant")
    if isinstance(request.get("input"), list):
        kinds = [item.get("type") if isinstance(item, dict) else None for item in request["input"]]
        return 1 + sum(1 for i, kind in enumerate(kinds) if kind == "function_call_output" and (i == 0 or kinds[i - 1] != kind))
    return 1


class Replay(RawServer):
    """The recorded answers of one (source, route), chosen by prompt and turn; a request that
    matches no recording gets HTTP 404 (so a wrong guess is never a pass)."""

    def __init__(self, source: str, route: str, path: str) -> None:
        self.prompts, self.recorded = recordings(source, route)
        self.served: list[tuple[str, int]] = []
        super().__init__()
        self.url = self.url.replace("/v1/chat/completions", path)

    def answer(self, connection: socket.socket, body: bytes) -> bool:
        request = json.loads(body)
        texts = strings(request)
        scenarios = [s for s, prompt in self.prompts.items() if any(prompt in text for text in texts)]
        recording = self.recorded.get((scenarios[0], turn_of(request))) if len(scenarios) == 1 else None
        if recording is None:
            connection.sendall(b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
            return True
        self.served.append((recording.scenario, recording.turn))
        connection.sendall(recording.response)
        head = recording.response.partition(b"\r\n\r\n")[0].lower()
        return b"connection: close" not in head


@dataclass(frozen=True)
class Run:
    """One contract run against its replay: exit code, verdicts, and the turns the replay served."""

    code: int
    verdicts: dict[str, dict[str, str]]  # scenario -> assertion -> status
    messages: dict[str, dict[str, str]]  # scenario -> assertion -> message
    served: tuple[tuple[str, int], ...]


def run_contract(name: str, folder: Path, text: str | None = None) -> Run:
    """``behavegate test <contract> --endpoint <replay> --format json``, run in ``folder`` (the
    project root the CLI reads relative paths from); ``text`` in place of the contract's own."""
    source, route, path = ROUTES[name]
    replay = Replay(source, route, path)
    (folder / f"{name}.yml").write_text(text if text is not None else (CONTRACTS / f"{name}.yml").read_text())
    out = io.StringIO()
    try:
        with contextlib.chdir(folder), contextlib.redirect_stdout(out):
            code = main(["test", f"{name}.yml", "--endpoint", replay.url, "--no-artifacts", "--format", "json"])
    finally:
        replay.close()
    report = json.loads(out.getvalue())
    verdicts = {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in report["scenarios"]}
    messages = {s["id"]: {a["assertion"]: a["message"] for a in s["assertions"]} for s in report["scenarios"]}
    return Run(code, verdicts, messages, tuple(sorted(replay.served)))


def expected() -> dict[str, dict[str, dict[str, dict[str, str]]]]:
    """contract -> scenario -> assertion -> {verdict, why?}: the right verdicts, from the truth."""
    document: dict[str, Any] = json.loads((SERVED / "expected.json").read_text())
    contracts: dict[str, dict[str, dict[str, dict[str, str]]]] = document["contracts"]
    return contracts


def mismatches(name: str, run: Run, scenario: str, *, stated: bool = False) -> list[tuple[str, str, str]]:
    """(assertion, expected, got) for every assertion of ``scenario`` whose verdict is not the right one;
    ``stated``: the right ones once the contract states agent.missing_tool_calls: none."""
    entries = expected()[name][scenario].items()
    right = {assertion: entry["stated"] if stated and "stated" in entry else entry["verdict"] for assertion, entry in entries}
    got = run.verdicts.get(scenario, {})
    return [
        (a, right.get(a, "(not expected)"), got.get(a, "(not judged)"))
        for a in sorted(right.keys() | got.keys())
        if right.get(a) != got.get(a)
    ]
