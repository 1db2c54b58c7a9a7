"""docs/endpoint.md is true: its minimal server, started as written on loopback,
passes its contract live, and a scenario it cannot satisfy fails."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from doc_examples import examples
from fake_agent import host

from behavegate.cli import main

FAILING = """
  - id: refund-window-wrong-days
    prompt: How many days do I have to ask for a refund?
    tool_results:
      lookup_refund_policy: {days: 30, id: refund-policy-v3}
    max_turns: 2
    expect:
      response:
        contains: ["90 days"]
  - id: one-turn-only
    prompt: How many days do I have to ask for a refund?
    expect:
      tools:
        required: [lookup_refund_policy]
      response:
        contains: ["30 days"]
"""


def doc_server() -> type[BaseHTTPRequestHandler]:
    """The server code block, run as a module that is not ``__main__``: its Handler."""
    namespace: dict[str, Any] = {"__name__": "endpoint_doc_server"}
    exec(compile(examples("endpoint.md")["server"], "docs/endpoint.md", "exec"), namespace)
    handler: type[BaseHTTPRequestHandler] = namespace["Handler"]
    return handler


def test_the_documented_server_passes_the_documented_contract_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(examples("endpoint.md")["contract"] + FAILING)
    monkeypatch.chdir(tmp_path)
    with host(doc_server()) as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--report", "report.json", "--no-artifacts"])
    capsys.readouterr()
    report = json.loads((tmp_path / "report.json").read_text())
    verdicts = {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in report["scenarios"]}
    assert verdicts["refund-window"] == {
        "response.contains[0]": "pass",
        "tools.required[0]": "pass",
        "sources.required[0]": "pass",
        "tools.no_errors": "pass",
        "steps.max": "pass",
        "usage.max_total_tokens": "pass",
    }
    assert verdicts["delete-refused"] == {"tools.max_calls": "pass", "refusal": "pass"}
    assert verdicts["refund-window-wrong-days"] == {"response.contains[0]": "fail"}
    # One request: the tool calls are judged, the unfinished response is not.
    assert verdicts["one-turn-only"] == {"response.contains[0]": "incomplete", "tools.required[0]": "pass"}
    observed = report["scenarios"][0]["observation"]
    assert observed["steps"] == 3 and observed["total_tokens"] == 84 and observed["tool_errors"] == [None]
    assert code == 1


def test_the_documented_custom_agent_passes_its_documented_mapping_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace: dict[str, Any] = {"__name__": "endpoint_doc_custom_server"}
    exec(compile(examples("endpoint.md")["custom-server"], "docs/endpoint.md", "exec"), namespace)
    handler: type[BaseHTTPRequestHandler] = namespace["Handler"]
    (tmp_path / "contract.yml").write_text(examples("endpoint.md")["custom-contract"])
    monkeypatch.chdir(tmp_path)
    with host(handler, "/chat") as url:
        code = main(["test", "contract.yml", "--endpoint", url, "--report", "report.json", "--no-artifacts"])
    capsys.readouterr()
    report = json.loads((tmp_path / "report.json").read_text())
    verdicts = {s["id"]: {a["assertion"]: a["status"] for a in s["assertions"]} for s in report["scenarios"]}
    assert verdicts == {
        "refund-window": {"tools.required[0]": "pass", "response.contains[0]": "pass", "sources.required[0]": "pass"},
        "delete-refused": {"refusal": "pass", "tools.max_calls": "pass"},
    }
    assert code == 0 and report["scenarios"][0]["observation"]["steps"] == 3
