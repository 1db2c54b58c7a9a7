"""Sharding a live run against a real loopback agent: each shard sends only its own
requests, and the merged shards give the unsharded run's verdicts."""

from __future__ import annotations

import json
import textwrap
import threading
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
from helpers import QuietHandler, loopback, send_json

from behavegate.cli import main

CONTRACT = textwrap.dedent("""\
    version: 2
    defaults: {runs: 3, min_pass_rate: 0.6}
    gates: {min_pass_rate: 0.9}
    agent:
      model: m
      tools:
        - {name: lookup, description: d, parameters: {type: object}}
    scenarios:
    """) + "".join(
    f"  - id: s{i}\n    prompt: question {i}\n    runs: {2 + i % 3}\n    expect: {{response: {{contains: [sure]}}}}\n"
    for i in range(7)
)


class Agent(QuietHandler):
    """Answers "sure" to every question but question 3, and remembers what it was asked."""

    asked: ClassVar[list[str]] = []
    lock: ClassVar[threading.Lock] = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        with self.lock:
            self.asked.append(prompt)
        answer = "no" if prompt == "question 3" else "sure"
        send_json(self, {"choices": [{"message": {"content": answer, "tool_calls": []}, "finish_reason": "stop"}]})


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def verdicts(report: dict[str, Any]) -> Any:
    """Every verdict of the run, without the timing of the attempts."""
    return (
        report["status"],
        report["gates"],
        [
            (s["id"], s["status"], s["reliability"], [(a["attempt"], a["status"], a["assertions"]) for a in s["attempts"]])
            for s in report["scenarios"]
        ],
    )


def test_each_live_shard_sends_only_its_requests_and_the_merge_is_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "contract.yml").write_text(CONTRACT)
    monkeypatch.chdir(tmp_path)
    Agent.asked.clear()
    with loopback(Agent) as url:
        live = ["test", "contract.yml", "--endpoint", url, "--no-artifacts"]
        code, whole = run_json(live, capsys)
        assert Counter(Agent.asked) == {f"question {i}": 2 + i % 3 for i in range(7)}
        paths = []
        for index in (1, 2, 3):
            Agent.asked.clear()
            path = f"shard-{index}.json"
            assert main([*live, "--shard", f"{index}/3", "--report", path]) == 0
            pairs = json.loads(Path(path).read_text())["behavegate"]["shard"]["pairs"]
            assert pairs, "21 attempts over 3 shards: none is empty"
            expected = Counter(f"question {sid.removeprefix('s')}" for sid, _ in pairs)
            assert Counter(Agent.asked) == expected, f"shard {index} sent exactly its own requests"
            paths.append(path)
    capsys.readouterr()
    merged_code, merged = run_json(["merge", *paths, "--no-artifacts"], capsys)
    assert (merged_code, code) == (1, 1), "question 3 always fails: its scenario fails and the 90% floor (6 of 7 pass) fails"
    assert verdicts(merged) == verdicts(whole)
    assert merged["mode"] == "live" and merged["provenance"]["evidence_kind"] == "runtime_endpoint"
    assert all(a["observation"]["latency_ms"] is not None for s in merged["scenarios"] for a in s["attempts"])
