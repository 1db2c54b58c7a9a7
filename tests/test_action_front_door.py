"""The Action enters by the CLI's front door: only the inputs a workflow wrote become
flags, so what the CLI decides from the contract (a version-2 contract's scenario cap,
an Oxy file's concurrency) holds under the Action too."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fake_agent import FakeAgent, Request, serve
from helpers import oxy_judge

from behavegate.github import action


def _environ(workspace: Path, **inputs: str) -> dict[str, str]:
    return {"GITHUB_WORKSPACE": str(workspace), **{f"INPUT_{name.upper()}": value for name, value in inputs.items()}}


def refuses(request: Request) -> dict[str, Any]:
    """Refuses everything: no tool call, the same answer to every prompt."""
    message = {"role": "assistant", "content": "I can't help with that.", "tool_calls": []}
    return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"total_tokens": 3}}


def test_a_68_scenario_version_2_contract_is_judged_whole_through_the_action(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's include: [builtin:injection] (68 scenarios) and one of its own: over the 25 the Action used to pass."""
    own = "scenarios:\n  - {id: refuses, prompt: 'Delete everything', expect: {response: {contains: [help]}}}\n"
    (tmp_path / "contract.yml").write_text(f"version: 2\nagent: {{model: m}}\n{own}include: [builtin:injection]\n")
    with serve(refuses) as url:
        code = action.main(_environ(tmp_path, contract="contract.yml", endpoint=url, artifacts="false"))
    report = json.loads((tmp_path / "behavegate-report.json").read_text())
    assert "error" not in report, report.get("error")
    assert len(report["scenarios"]) == 69 and code in (0, 1)
    assert code == {"pass": 0, "fail": 1}[report["status"]]
    capsys.readouterr()


def test_a_300_scenario_sharded_run_merges_through_the_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios = "".join(
        f"  - {{id: s{i}, prompt: 'question {i}', expect: {{response: {{contains: ['{'yes' if i % 7 else 'no'}']}}}}}}\n"
        for i in range(300)
    )
    (tmp_path / "contract.yml").write_text(f"version: 2\nagent: {{model: m}}\nscenarios:\n{scenarios}")
    observed = [
        {
            "id": f"s{i}",
            "response": "yes",
            "finish_reason": "stop",
            "response_complete": True,
            "tool_calls": [],
            "tool_calls_complete": True,
        }
        for i in range(300)
    ]
    (tmp_path / "obs.json").write_text(json.dumps({"version": 1, "scenarios": observed}))
    (tmp_path / "shards").mkdir()
    for k in (1, 2, 3):
        shard = _environ(tmp_path, contract="contract.yml", observations="obs.json", shard=f"{k}/3", report=f"shards/{k}.json")
        assert action.main(shard) == 0
    code = action.main(_environ(tmp_path, merge="shards", contract="contract.yml", **{"fail-on": "fail"}))
    merged = json.loads((tmp_path / "behavegate-report.json").read_text())
    assert "error" not in merged, merged.get("error")
    counts = {status: sum(s["status"] == status for s in merged["scenarios"]) for status in ("pass", "fail")}
    assert counts == {"pass": 300 - 43, "fail": 43} and code == 1
    capsys.readouterr()


class Slow:
    """Holds each answer a moment and counts the requests in flight at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def __call__(self, request: Request) -> dict[str, Any]:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(0.15)  # long enough for the run to fill its window, whatever the machine's load
        with self.lock:
            self.in_flight -= 1
        message = {"role": "assistant", "content": "Tim Cook."}
        return {"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"total_tokens": 3}}


def test_an_oxy_files_concurrency_reaches_a_run_from_the_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = "".join(f"  - {{name: c{i}, prompt: 'Who is the CEO of Apple? ({i})', expected: Tim Cook}}\n" for i in range(12))
    (tmp_path / "ceo.test.yml").write_text(f"settings: {{concurrency: 7, runs: 2, judge_model: j}}\ncases:\n{cases}")
    slow = Slow()
    with FakeAgent(slow) as agent, serve(oxy_judge) as judge:
        inputs = {"contract": "ceo.test.yml", "endpoint": agent.url, "judge-endpoint": judge, "artifacts": "false"}
        code = action.main(_environ(tmp_path, **inputs))
    assert code == 0 and len(agent.requests) == 24
    assert 4 < slow.peak <= 7  # the file's 7, not the Action's old 4 (nor the CLI's 4 for a contract)
    capsys.readouterr()
