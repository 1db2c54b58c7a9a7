"""Sharding a live run against a real loopback agent: each shard sends only its own
requests, and the merged shards give the unsharded run's verdicts."""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fake_agent import FakeAgent, Request

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


def sure_but_3(request: Request) -> dict[str, Any]:
    """Answers "sure" to every question but question 3."""
    answer = "no" if request.prompt == "question 3" else "sure"
    return {"choices": [{"message": {"content": answer, "tool_calls": []}, "finish_reason": "stop"}]}


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
    with FakeAgent(sure_but_3) as agent:
        live = ["test", "contract.yml", "--endpoint", agent.url, "--no-artifacts"]
        code, whole = run_json(live, capsys)
        assert Counter(agent.prompts) == {f"question {i}": 2 + i % 3 for i in range(7)}
        paths = []
        for index in (1, 2, 3):
            agent.requests.clear()
            path = f"shard-{index}.json"
            assert main([*live, "--shard", f"{index}/3", "--report", path]) == 0
            pairs = json.loads(Path(path).read_text())["behavegate"]["shard"]["pairs"]
            assert pairs, "21 attempts over 3 shards: none is empty"
            expected = Counter(f"question {sid.removeprefix('s')}" for sid, _ in pairs)
            assert Counter(agent.prompts) == expected, f"shard {index} sent exactly its own requests"
            paths.append(path)
    capsys.readouterr()
    merged_code, merged = run_json(["merge", *paths, "--no-artifacts"], capsys)
    assert (merged_code, code) == (1, 1), "question 3 always fails: its scenario fails and the 90% floor (6 of 7 pass) fails"
    assert verdicts(merged) == verdicts(whole)
    assert merged["mode"] == "live" and merged["provenance"]["evidence_kind"] == "runtime_endpoint"
    assert all(a["observation"]["latency_ms"] is not None for s in merged["scenarios"] for a in s["attempts"])
